import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { AppError } from '../common/errors';
import { ApiKeyService, unauthorized } from './api-key.service';
import { AUTH_OPTIONS, AuthModuleOptions } from './auth.options';
import { PLAN_TIER_KEY, PlanTier, PRINCIPAL } from './plan.decorator';
import { PlanService } from './plan.service';
import { RateLimitService } from './rate-limit.service';

/**
 * Identity and permission for `/v1`: who calls (API key), whether they may (plan tier), and
 * whether they may right now (rate limit). Failed authentication is limited per client address
 * and never charged to a customer.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly anonymousLimit: number;

  constructor(
    private readonly keys: ApiKeyService,
    private readonly limits: RateLimitService,
    private readonly plans: PlanService,
    private readonly reflector: Reflector,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(AUTH_OPTIONS) options: AuthModuleOptions,
  ) {
    this.anonymousLimit = options.unauthenticatedPerMinute ?? 60;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest();
    const res = context.switchToHttp().getResponse();
    const setHeaders = (h: Record<string, string>) => {
      for (const [k, v] of Object.entries(h)) this.adapterHost.httpAdapter.setHeader(res, k, v);
    };

    let principal;
    try {
      principal = await this.keys.authenticate(authorizationHeader(req));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const state = await this.limits.consume(`ip:${req.ip ?? req.socket?.remoteAddress ?? 'unknown'}`, this.anonymousLimit);
      setHeaders(RateLimitService.headers(state));
      throw state.allowed ? err : RateLimitService.rejection(state);
    }

    const plan = this.plans.limits(principal.plan);
    const state = await this.limits.consume(`key:${principal.keyId}`, plan.requestsPerMinute);
    setHeaders(RateLimitService.headers(state));
    if (!state.allowed) throw RateLimitService.rejection(state);

    const tier = this.reflector.getAllAndOverride<PlanTier | undefined>(PLAN_TIER_KEY, [context.getHandler(), context.getClass()]);
    if (tier === 'business_plus' && !plan.businessPlus) {
      throw new AppError('PLAN_REQUIRED', `this route requires the Business plan or above; your plan is ${principal.plan}`);
    }
    req[PRINCIPAL] = principal;
    return true;
  }
}

type RawRequest = { rawHeaders?: string[]; headers?: Record<string, unknown>; raw?: RawRequest };

/**
 * The request's one Authorization header. Node keeps the first of several Authorization headers
 * and drops the rest, while a proxy in front may act on the last: a request carrying more than one
 * is refused, never read as one of them. The raw headers are counted (express hands over the Node
 * request, fastify wraps it in `raw`).
 */
export function authorizationHeader(req: RawRequest): string | undefined {
  const raw = req.rawHeaders ?? req.raw?.rawHeaders ?? [];
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === 'authorization') count++;
  if (count > 1) throw unauthorized(`send exactly one Authorization header; this request has ${count}`);
  const value = req.headers?.authorization;
  return typeof value === 'string' ? value : undefined;
}
