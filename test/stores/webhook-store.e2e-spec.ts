import { EndpointStore } from '../../src/delivery/endpoint.store';
import type { WebhookStore } from '../../src/webhooks/webhook.store';
import { PostgresWebhookStore } from '../../src/webhooks/webhook.store.postgres';
import { SqliteWebhookStore } from '../../src/webhooks/webhook.store.sqlite';
import { testDatabases } from '../support/databases';
import { storeFixture } from './store-fixture';
import { webhookStoreConformance } from './webhook-store.conformance';

describe.each(testDatabases())('WebhookStore on %s', (_name, makeDb) => {
  webhookStoreConformance(storeFixture<WebhookStore>(makeDb, { sqlite: SqliteWebhookStore, postgres: PostgresWebhookStore }, (Store, ds) => new Store(ds, new EndpointStore(ds))));
});
