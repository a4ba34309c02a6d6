import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { AppError } from '../common/errors';
import { unauthorized } from './api-key.service';
import { AUTH_OPTIONS, AuthModuleOptions } from './auth.options';
import { PLAN_TIER_KEY, PlanTier, PRINCIPAL } from './plan.decorator';
import { PlanService } from './plan.service';
import { checkPrincipal, PRINCIPAL_RESOLVER, PrincipalResolver, TrendhooksPrincipal } from './principal';
import { RateLimitService, RateLimitState } from './rate-limit.service';

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
    const charged = await this.charge(context);
    if (!charged.principal) throw charged.state.allowed ? charged.refusal : RateLimitService.rejection(charged.state);
    if (!charged.state.allowed) throw RateLimitService.rejection(charged.state);
    const { principal } = charged;
    const tier = this.reflector.getAllAndOverride<PlanTier | undefined>(PLAN_TIER_KEY, [context.getHandler(), context.getClass()]);
    if (tier === 'business_plus' && !this.plans.limits(principal.plan).businessPlus) {
      throw new AppError('PLAN_REQUIRED', `this route requires the Business plan or above; your plan is ${principal.plan}`);
    }
    const req = context.switchToHttp().getRequest();
    if (principal.webhookId !== undefined) checkWebhookScope(principal.webhookId, req.params);
    req[PRINCIPAL] = principal;
    return true;
  }

  /**
   * A `/v1` request that matched no route is a `/v1` request all the same: it is counted as a
   * routed one is (the caller's budget, or its address's when it has no valid identity) and
   * carries the same headers. Gives the 429 to answer instead of the 404 past the limit.
   * `context` has no handler or class (no route matched); the standalone app's error filter calls this.
   */
  async chargeUnmatched(context: ExecutionContext): Promise<AppError | undefined> {
    const { state } = await this.charge(context);
    return state.allowed ? undefined : RateLimitService.rejection(state);
  }

  /**
   * Who calls, charged to their budget, the rate-limit headers set. A failed identification is
   * charged to the client address instead (never to a principal), with the 401 it earned.
   */
  private async charge(context: ExecutionContext): Promise<{ principal: TrendhooksPrincipal; state: RateLimitState } | { principal: null; state: RateLimitState; refusal: AppError }> {
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
      return { principal: null, state, refusal: err };
    }
    const principal = checkPrincipal(resolved, this.plans.names());
    const state = await this.limits.consume(principal.rateLimitKey ?? `tenant:${principal.tenantId}`, this.plans.limits(principal.plan).requestsPerMinute);
    setHeaders(RateLimitService.headers(state));
    return { principal, state };
  }
}

/**
 * A principal limited to one webhook: a route naming another webhook answers as for another
 * customer's (404), a route naming none (list, create, events) is refused.
 */
function checkWebhookScope(webhookId: string, params: Record<string, unknown> | undefined): void {
  const named = params?.webhook_id;
  if (typeof named !== 'string') throw new AppError('FORBIDDEN', `this session reaches webhook ${webhookId} only`);
  if (named.toUpperCase() !== webhookId.toUpperCase()) throw new AppError('NOT_FOUND', `webhook ${named.slice(0, 40)} not found`);
}
