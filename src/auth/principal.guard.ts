import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { AppError } from '../common/errors';
import { unauthorized } from './api-key.service';
import { AUTH_OPTIONS, AuthModuleOptions } from './auth.options';
import { PLAN_TIER_KEY, PlanTier, PRINCIPAL } from './plan.decorator';
import { PlanService } from './plan.service';
import { checkPrincipal, PRINCIPAL_RESOLVER, PrincipalResolver, TrendhooksPrincipal } from './principal';
import { RateLimitService } from './rate-limit.service';

/**
 * Identity and permission for `/v1`: who calls (the PrincipalResolver: an API key by default, the
 * host's own identity when configured), whether they may (plan tier), and whether they may right
 * now (rate limit). Failed authentication is limited per client address and never charged to a
 * principal.
 */
@Injectable()
export class PrincipalGuard implements CanActivate {
  private readonly anonymousLimit: number;

  constructor(
    @Inject(PRINCIPAL_RESOLVER) private readonly resolver: PrincipalResolver,
    private readonly limits: RateLimitService,
    private readonly plans: PlanService,
    private readonly reflector: Reflector,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(AUTH_OPTIONS) options: AuthModuleOptions,
  ) {
    this.anonymousLimit = options.unauthenticatedPerMinute ?? 60;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest();
    const res = http.getResponse();
    // Straight on the Node response (express) or the fastify reply: the adapter's setHeader goes
    // through express's res.set, five times per request.
    const setHeaders = (h: Record<string, string>) => {
      if (typeof res.setHeader === 'function') for (const k in h) res.setHeader(k, h[k]);
      else for (const k in h) this.adapterHost.httpAdapter.setHeader(res, k, h[k]);
    };

    let resolved: TrendhooksPrincipal | null | undefined;
    try {
      resolved = await this.resolver.resolve(req, context);
      if (resolved === null || resolved === undefined) throw unauthorized('this route needs an authenticated caller');
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const state = await this.limits.consume(`ip:${req.ip ?? req.socket?.remoteAddress ?? 'unknown'}`, this.anonymousLimit);
      setHeaders(RateLimitService.headers(state));
      throw state.allowed ? err : RateLimitService.rejection(state);
    }
    const principal = checkPrincipal(resolved, this.plans.names());

    const plan = this.plans.limits(principal.plan);
    const state = await this.limits.consume(principal.rateLimitKey ?? `tenant:${principal.tenantId}`, plan.requestsPerMinute);
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
