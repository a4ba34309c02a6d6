import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations, schemaDrift } from '../src/database/data-source';
import type { DatabaseConfig } from '../src/database/dialect';
import { trendhooksMigrations, type TrendhooksFeatures } from '../src/database/features';
import { TRENDHOOKS_ENTITIES, trendhooksEntities } from '../src/entities';
import { testDatabases, type TestDatabase } from './support/databases';

/**
 * The per-feature migrations a host runs in its own migrations table build exactly the tables of
 * the features it picked (no drift against their entities, no other table), and all of them
 * together build the same schema as the standalone's series.
 */

const CORE = ['deliveries', 'delivery_attempts', 'destination_circuits', 'events', 'operations_notifications', 'portal_sessions', 'webhook_subscriptions', 'webhooks'];
const TABLES = { apiKeys: ['api_keys', 'customers'], settings: ['settings'], posts: ['posts', 'trend_sources'] };

const PICKS: [string, TrendhooksFeatures][] = [
  ['core only', { apiKeys: false, settings: false, posts: false }],
  ['core + api keys', { apiKeys: true, settings: false, posts: false }],
  ['core + settings', { apiKeys: false, settings: true, posts: false }],
  ['core + posts', { apiKeys: false, settings: false, posts: true }],
  ['every feature (the default)', {}],
];

function expectedTables(f: TrendhooksFeatures): string[] {
  const on = (k: keyof typeof TABLES) => f[k] ?? true;
  return [...CORE, ...(on('apiKeys') ? TABLES.apiKeys : []), ...(on('settings') ? TABLES.settings : []), ...(on('posts') ? TABLES.posts : [])].sort();
}

/** Every table, column and index trendhooks owns (the migrations table left out), in a form both series can be compared in. */
async function describeSchema(ds: DataSource, skip: string): Promise<Record<string, unknown>> {
  if (ds.options.type === 'postgres') {
    const columns = await ds.query(
      `SELECT table_name, ordinal_position, column_name, data_type, character_maximum_length AS len, is_nullable, column_default
         FROM information_schema.columns WHERE table_schema = current_schema() AND table_name <> $1 ORDER BY table_name, ordinal_position`,
      [skip],
    );
    const indexes = await ds.query(`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename <> $1 ORDER BY indexname`, [skip]);
    const constraints = await ds.query(
      `SELECT table_name, constraint_name, constraint_type FROM information_schema.table_constraints
         WHERE table_schema = current_schema() AND table_name <> $1 AND constraint_type <> 'CHECK' ORDER BY constraint_name`,
      [skip],
    );
    return { columns, indexes, constraints };
  }
  const tables: { name: string }[] = await ds.query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> ? ORDER BY name`, [skip]);
  const out: Record<string, unknown> = {};
  for (const { name } of tables) {
    const columns = await ds.query(`PRAGMA table_info("${name}")`);
    const list: { name: string; unique: number; origin: string }[] = await ds.query(`PRAGMA index_list("${name}")`);
    const indexes = [];
    for (const ix of [...list].sort((a, b) => a.name.localeCompare(b.name))) {
      // Automatic indexes (primary keys, UNIQUE constraints) are named by position: compare what they cover.
      const cols = (await ds.query(`PRAGMA index_info("${ix.name}")`)).map((c: { name: string }) => c.name);
      indexes.push({ name: ix.name.startsWith('sqlite_autoindex_') ? `auto:${ix.origin}` : ix.name, unique: ix.unique, cols });
    }
    out[name] = { columns, indexes };
  }
  return out;
}

async function tableNames(ds: DataSource, skip: string): Promise<string[]> {
  const rows: { name: string }[] =
    ds.options.type === 'postgres'
      ? await ds.query(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name <> $1`, [skip])
      : await ds.query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> ?`, [skip]);
  return rows.map((r) => r.name).sort();
}

describe.each(testDatabases())('per-feature migrations on %s', (_name, makeDb) => {
  const made: TestDatabase[] = [];
  const open: DataSource[] = [];
  afterAll(async () => {
    for (const ds of open) if (ds.isInitialized) await ds.destroy();
    for (const db of made) await db.drop();
  });

  async function fresh(): Promise<DatabaseConfig> {
    const db = makeDb();
    made.push(db);
    return db.create();
  }

  /** A host's own DataSource: its migrations table, our entities and migrations for `features`. */
  async function hostDataSource(features: TrendhooksFeatures): Promise<DataSource> {
    const db = await fresh();
    const base = dataSourceOptions(db, trendhooksEntities(features));
    const ds = new DataSource({ ...base, migrations: trendhooksMigrations(db.type, features), migrationsTableName: 'host_migrations' } as typeof base);
    open.push(ds);
    await ds.initialize();
    return ds;
  }

  it.each(PICKS)('%s: exactly those tables, no drift against their entities', async (_label, features) => {
    const ds = await hostDataSource(features);
    const applied = await runMigrations(ds);
    expect(applied).toHaveLength(trendhooksMigrations(ds.options.type === 'postgres' ? 'postgres' : 'sqlite', features).length);
    expect(await schemaDrift(ds)).toEqual({ up: [], down: [] });
    expect(await tableNames(ds, 'host_migrations')).toEqual(expectedTables(features));
    // Recorded in the host's table, so a second run (another process, the CLI) replays nothing.
    expect(await runMigrations(ds)).toEqual([]);
    const recorded: { name: string }[] = await ds.query('SELECT name FROM host_migrations');
    expect(recorded.map((r) => r.name).sort()).toEqual([...applied].sort());
  });

  it('all features together build the same schema as the standalone series in trendhooks_migrations', async () => {
    const host = await hostDataSource({});
    await runMigrations(host);
    const standalone = new DataSource(dataSourceOptions(await fresh(), TRENDHOOKS_ENTITIES));
    open.push(standalone);
    await standalone.initialize();
    expect((await runMigrations(standalone)).length).toBeGreaterThan(0);
    expect(await schemaDrift(standalone)).toEqual({ up: [], down: [] });
    const a = await describeSchema(host, 'host_migrations');
    const b = await describeSchema(standalone, 'trendhooks_migrations');
    expect(Object.keys(a).length).toBeGreaterThan(0);
    expect(a).toEqual(b);
  });
});
