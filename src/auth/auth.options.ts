import { ConfigurableModuleBuilder, Inject } from '@nestjs/common';
import type { Plan, PlanLimits } from './plans';
import type { RateLimitStore } from './rate-limit.store';

export interface AuthModuleOptions {
  /** Per-plan figures; defaults to DECISIONS' table. */
  plans?: Record<Plan, PlanLimits>;
  /** Where rate-limit counters live; in-process by default, Redis for several instances. */
  rateLimitStore?: RateLimitStore;
  /** Requests per minute allowed per client address for requests that fail authentication. */
  unauthenticatedPerMinute?: number;
}

export const { ConfigurableModuleClass: AuthConfigurableModule, MODULE_OPTIONS_TOKEN: AUTH_OPTIONS } =
  new ConfigurableModuleBuilder<AuthModuleOptions>()
    .setClassMethodName('forRoot')
    // Global by default so feature modules (webhooks, posts) share one key store and one limiter.
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();

/** `@InjectAuthOptions() options: AuthModuleOptions`: what forRoot / forRootAsync was given. */
export const InjectAuthOptions = (): ParameterDecorator & PropertyDecorator => Inject(AUTH_OPTIONS);
