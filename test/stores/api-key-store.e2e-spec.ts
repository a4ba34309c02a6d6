import type { ApiKeyStore } from '../../src/auth/api-key.store';
import { PostgresApiKeyStore } from '../../src/auth/api-key.store.postgres';
import { SqliteApiKeyStore } from '../../src/auth/api-key.store.sqlite';
import { testDatabases } from '../support/databases';
import { apiKeyStoreConformance } from './api-key-store.conformance';
import { storeFixture } from './store-fixture';

describe.each(testDatabases())('ApiKeyStore on %s', (_name, makeDb) => {
  apiKeyStoreConformance(storeFixture<ApiKeyStore>(makeDb, { sqlite: SqliteApiKeyStore, postgres: PostgresApiKeyStore }));
});
