import { DynamicModule, Module } from '@nestjs/common';
import { configuredModule } from '../core/configured-module';
import { ApiKeyPrincipalResolver } from './api-key.principal-resolver';
import { AUTH_OPTIONS, AUTH_OPTIONS_ASYNC_TYPE, AUTH_OPTIONS_TYPE, AuthConfigurableModule, AuthModuleOptions } from './auth.options';
import { PlanService } from './plan.service';
import { NO_RESOLVER, PRINCIPAL_RESOLVER, PrincipalResolver } from './principal';
import { PrincipalGuard } from './principal.guard';
import { PrivateDestinationsService } from './private-destinations.service';
import { RateLimitService } from './rate-limit.service';
import { MemoryRateLimitStore, RATE_LIMIT_STORE } from './rate-limit.store';

/** AuthModule's options (configuredModule). */
@Module({})
class AuthOptionsModule extends AuthConfigurableModule {}

/**
 * Identity, plans and rate limits. Who calls is the PrincipalResolver's answer: the host's
 * (`principalResolver`), else ApiKeysModule's API keys. Registers no global guard: controllers opt
 * in with `@UseGuards(PrincipalGuard)` (and `@BusinessPlus()`), so a host app keeps its own global setup.
 */
@Module({
  providers: [
    {
      provide: RATE_LIMIT_STORE,
      inject: [AUTH_OPTIONS],
      useFactory: (o: AuthModuleOptions) => o.rateLimitStore ?? new MemoryRateLimitStore(),
    },
    {
      provide: PRINCIPAL_RESOLVER,
      inject: [AUTH_OPTIONS, { token: ApiKeyPrincipalResolver, optional: true }],
      useFactory: (o: AuthModuleOptions, apiKeys?: ApiKeyPrincipalResolver): PrincipalResolver => {
        // Neither: fine for a host serving no trendhooks routes; WebhooksModule and PostsModule refuse to boot.
        const resolver = o.principalResolver ?? apiKeys ?? NO_RESOLVER;
        if (typeof resolver.resolve !== 'function') throw new Error('AuthModule principalResolver must have a resolve(request, context) method');
        return o.extendResolver && resolver !== NO_RESOLVER ? o.extendResolver(resolver) : resolver;
      },
    },
    RateLimitService,
    PlanService,
    PrincipalGuard,
    PrivateDestinationsService,
  ],
  exports: [PrivateDestinationsService, RateLimitService, PlanService, PrincipalGuard, PRINCIPAL_RESOLVER, RATE_LIMIT_STORE],
})
export class AuthModule {
  static forRoot(options: typeof AUTH_OPTIONS_TYPE): DynamicModule {
    return configuredModule(AuthModule, AuthOptionsModule.forRoot(options), options.isGlobal);
  }

  static forRootAsync(options: typeof AUTH_OPTIONS_ASYNC_TYPE): DynamicModule {
    return configuredModule(AuthModule, AuthOptionsModule.forRootAsync(options), options.isGlobal);
  }
}
