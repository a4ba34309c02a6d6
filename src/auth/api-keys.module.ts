import { Global, Module } from '@nestjs/common';
import { dialectProvider } from '../database/dialect';
import { ApiKeyPrincipalResolver } from './api-key.principal-resolver';
import { ApiKeyService } from './api-key.service';
import { ApiKeyStore } from './api-key.store';
import { PostgresApiKeyStore } from './api-key.store.postgres';
import { SqliteApiKeyStore } from './api-key.store.sqlite';

/**
 * trendhooks' own identity: customers and their API keys (the `customers` and `api_keys` tables),
 * and the customers' private-destination grants. The standalone service imports it; a host app
 * that identifies callers itself (AuthModule's `principalResolver`) leaves it, and its tables, out.
 * Global, a justified exception: it is an optional plug-in that AuthModule finds (@Optional) when
 * the host imports it. AuthModule cannot import it: that would force API keys, and their tables, on
 * every host.
 */
@Global()
@Module({
  providers: [
    dialectProvider(ApiKeyStore, { sqlite: SqliteApiKeyStore, postgres: PostgresApiKeyStore }),
    ApiKeyService,
    ApiKeyPrincipalResolver,
  ],
  exports: [ApiKeyStore, ApiKeyService, ApiKeyPrincipalResolver],
})
export class ApiKeysModule {}
