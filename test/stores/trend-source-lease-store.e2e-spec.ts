import type { TrendSourceLeaseStore } from '../../src/trends/reddit/trend-source-lease.store';
import { PostgresTrendSourceLeaseStore } from '../../src/trends/reddit/trend-source-lease.store.postgres';
import { SqliteTrendSourceLeaseStore } from '../../src/trends/reddit/trend-source-lease.store.sqlite';
import { testDatabases } from '../support/databases';
import { storeFixture } from './store-fixture';
import { trendSourceLeaseStoreConformance } from './trend-source-lease-store.conformance';

describe.each(testDatabases())('TrendSourceLeaseStore on %s', (_name, makeDb) => {
  trendSourceLeaseStoreConformance(storeFixture<TrendSourceLeaseStore>(makeDb, { sqlite: SqliteTrendSourceLeaseStore, postgres: PostgresTrendSourceLeaseStore }));
});
