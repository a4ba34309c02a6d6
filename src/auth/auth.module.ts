import { Module } from '@nestjs/common';
import { dialectProvider } from '../database/dialect';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyService } from './api-key.service';
import { ApiKeyStore } from './api-key.store';
import { PostgresApiKeyStore } from './api-key.store.postgres';
import { SqliteApiKeyStore } from './api-key.store.sqlite';
import { AUTH_OPTIONS, AuthConfigurableModule, AuthModuleOptions } from './auth.options';
import { PlanService } from './plan.service';
import { PrivateDestinationsService } from './private-destinations.service';
import { RateLimitService } from './rate-limit.service';
import { MemoryRateLimitStore, RATE_LIMIT_STORE } from './rate-limit.store';

/**
 * API keys, customers, plans and rate limits. Registers no global guard: controllers opt in with
 * `@UseGuards(ApiKeyGuard)` (and `@BusinessPlus()`), so a host app keeps its own global setup.
 */
@Module({
  providers: [
    {
      provide: RATE_LIMIT_STORE,
      inject: [AUTH_OPTIONS],
      useFactory: (o: AuthModuleOptions) => o.rateLimitStore ?? new MemoryRateLimitStore(),
    },
    dialectProvider(ApiKeyStore, { sqlite: SqliteApiKeyStore, postgres: PostgresApiKeyStore }),
    ApiKeyService,
    RateLimitService,
    PlanService,
    ApiKeyGuard,
    PrivateDestinationsService,
  ],
  exports: [PrivateDestinationsService, ApiKeyService, RateLimitService, PlanService, ApiKeyGuard, AUTH_OPTIONS, RATE_LIMIT_STORE],
})
export class AuthModule extends AuthConfigurableModule {}
