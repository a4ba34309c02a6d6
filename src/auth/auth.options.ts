import { ConfigurableModuleBuilder, Inject } from '@nestjs/common';
import { isRequestsPerMinute } from '../config/settings';
import { globalOptions } from '../core/configured-module';
import type { Plan, PlanLimits } from './plans';
import type { PrincipalResolver } from './principal';
import type { RateLimitStore } from './rate-limit.store';

export interface AuthModuleOptions {
  /** Per-plan figures; defaults to DECISIONS' table. */
  plans?: Record<Plan, PlanLimits>;
  /** Where rate-limit counters live; in-process by default, Redis for several instances. */
  rateLimitStore?: RateLimitStore;
  /** Requests per minute allowed per client address for requests that fail authentication. */
  unauthenticatedPerMinute?: number;
  /**
   * Maps a request to its principal (tenant and plan): the host's own identity, from its guard's
   * `req.user`, a JWT or a session. Without it, ApiKeysModule's API keys (ApiKeysModule must then
   * be imported, or the app does not boot).
   */
  principalResolver?: PrincipalResolver;
  /**
   * Wraps the resolver in force (the host's or the API keys'), e.g. `(r) => withPortalSessions(portal, r)`
   * so that portal sessions reach the same routes. Never called when there is no resolver at all.
   */
  extendResolver?: (resolver: PrincipalResolver) => PrincipalResolver;
  /**
   * How long a looked-up API key is trusted before the database is asked again (0 to 5000 ms,
   * default 2000): a key revoked by another process is refused within this.
   */
  apiKeyCacheTtlMs?: number;
}

export const { ConfigurableModuleClass: AuthConfigurableModule, MODULE_OPTIONS_TOKEN: AUTH_OPTIONS, OPTIONS_TYPE: AUTH_OPTIONS_TYPE, ASYNC_OPTIONS_TYPE: AUTH_OPTIONS_ASYNC_TYPE } =
  new ConfigurableModuleBuilder<AuthModuleOptions>()
    .setClassMethodName('forRoot')
    // The options only are global (globalOptions); the module is imported where it is needed.
    .setExtras({ isGlobal: false }, (definition) => globalOptions(definition, checkAuthOptions))
    .build();

/** `@InjectAuthOptions() options: AuthModuleOptions`: what forRoot / forRootAsync was given. */
export const InjectAuthOptions = (): ParameterDecorator & PropertyDecorator => Inject(AUTH_OPTIONS);

/**
 * AuthModule's rates, checked at start: a plan's (PLAN_RATE_LIMITS' check) and the unauthenticated
 * one (an option only: the standalone keeps its default). apiKeyCacheTtlMs is ApiKeyService's, checked when it is built.
 */
export function checkAuthOptions(o: AuthModuleOptions): void {
  for (const [plan, limits] of Object.entries(o.plans ?? {})) {
    if (!isRequestsPerMinute(limits?.requestsPerMinute)) {
      throw new Error(`PLAN_RATE_LIMITS (AuthModule's plans.${plan}.requestsPerMinute) must be a whole number of at least 1, got ${String(limits?.requestsPerMinute)}`);
    }
  }
  if (o.unauthenticatedPerMinute !== undefined && !isRequestsPerMinute(o.unauthenticatedPerMinute)) {
    throw new Error(`AuthModule's unauthenticatedPerMinute must be a whole number of at least 1, got ${String(o.unauthenticatedPerMinute)}`);
  }
}
