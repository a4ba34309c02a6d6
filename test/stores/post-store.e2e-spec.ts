import type { PostStore } from '../../src/posts/post.store';
import { PostgresPostStore } from '../../src/posts/post.store.postgres';
import { SqlitePostStore } from '../../src/posts/post.store.sqlite';
import { testDatabases } from '../support/databases';
import { postStoreConformance } from './post-store.conformance';
import { storeFixture } from './store-fixture';

describe.each(testDatabases())('PostStore on %s', (_name, makeDb) => {
  postStoreConformance(storeFixture<PostStore>(makeDb, { sqlite: SqlitePostStore, postgres: PostgresPostStore }));
});
