import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import { dataSourceOptions, runMigrations } from '../src/database/data-source';
import type { DatabaseConfig } from '../src/database/dialect';
import { trendhooksMigrations } from '../src/database/features';
import { trendhooksEntities } from '../src/entities';
import { testDatabases, type TestDatabase } from './support/databases';

const exec = promisify(execFile);
const CLI = path.resolve(__dirname, '../dist/cli.js');

async function trendhooks(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** The host's own migration, recorded in the same table as trendhooks'. */
class HostWidgets1700000000000 implements MigrationInterface {
  name = 'HostWidgets1700000000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE TABLE host_widgets (id integer PRIMARY KEY, label varchar(40) NOT NULL)');
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE host_widgets');
  }
}

const FEATURES = { apiKeys: true, settings: false, posts: false };

/**
 * The reported bug: a host runs trendhooks' migrations in its own migrations table, then
 * `trendhooks keys create` against that database replayed them from `trendhooks_migrations`
 * ("table api_keys already exists"). With --migrations-table the CLI reads the host's table.
 */
describe.each(testDatabases())('trendhooks CLI on a host database (%s)', (_name, makeDb) => {
  let db: TestDatabase;
  let config: DatabaseConfig;
  let env: Record<string, string>;
  let host: DataSource;
  let keyDir: string;

  beforeAll(async () => {
    db = makeDb();
    config = await db.create();
    keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-host-db-'));
    env = { DATABASE_URL: config.type === 'postgres' ? config.url : `sqlite:${config.path}`, LOG_LEVEL: 'error', ENCRYPTION_KEY_FILE: path.join(keyDir, 'trendhooks.key') };
    // The host's DataSource: its own migrations and trendhooks' (core, api keys, settings; no posts) in host_migrations.
    const base = dataSourceOptions(config, trendhooksEntities(FEATURES));
    host = new DataSource({ ...base, migrations: [HostWidgets1700000000000, ...trendhooksMigrations(config.type, FEATURES)], migrationsTableName: 'host_migrations' } as typeof base);
    await host.initialize();
    await runMigrations(host);
  });
  afterAll(async () => {
    await host?.destroy();
    await db?.drop();
    fs.rmSync(keyDir, { recursive: true, force: true });
  });

  const recorded = async () => ((await host.query('SELECT name FROM host_migrations ORDER BY name')) as { name: string }[]).map((r) => r.name);
  const tables = async (): Promise<string[]> =>
    (
      (await host.query(
        config.type === 'postgres'
          ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1"
          : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 1",
      )) as { name: string }[]
    ).map((r) => r.name);

  it('issues a key through the host migrations table, replaying nothing and creating no table', async () => {
    const before = { recorded: await recorded(), tables: await tables() };
    expect(before.recorded).toHaveLength(11); // the host's, core's nine, api-keys'
    const run = await trendhooks(['keys', 'create', '--customer', 'acme', '--plan', 'business', '--json', '--migrations-table', 'host_migrations', '--features', 'core,api-keys'], env);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const issued = JSON.parse(run.stdout) as { key: string; customer: string };
    expect(issued.customer).toBe('acme');
    const rows: { customer_id: string }[] = await host.query('SELECT customer_id FROM api_keys');
    expect(rows).toHaveLength(1);
    expect({ recorded: await recorded(), tables: await tables() }).toEqual(before);
  });

  it('takes the table and the features from the environment too, and finds no drift', async () => {
    const run = await trendhooks(['migrate', '--check'], { ...env, TRENDHOOKS_MIGRATIONS_TABLE: 'host_migrations', TRENDHOOKS_FEATURES: 'core,api-keys' });
    expect(run).toMatchObject({ code: 0, stdout: `no drift on ${config.type}\n` });
    const migrate = await trendhooks(['--migrations-table', 'host_migrations', '--features', 'api-keys', 'migrate'], env);
    expect(migrate).toMatchObject({ code: 0, stdout: expect.stringMatching(/^database is up to date .*; no migration applied\n$/) });
  });

  it('re-encrypts stored secrets on a database without the settings feature (no cursor secret kept there)', async () => {
    const run = await trendhooks(['encryption', 'reencrypt', '--migrations-table', 'host_migrations', '--features', 'core,api-keys'], env);
    expect(run).toMatchObject({ code: 0, stderr: '', stdout: expect.stringMatching(/^re-encrypted 0 of 0 webhooks under key /) });
  });

  it('emits a test event through the host migrations table, changing no table', async () => {
    const before = { recorded: await recorded(), tables: await tables() };
    const run = await trendhooks(['events', 'emit', '--event', 'trends.surge', '--subreddit', 'typescript', '--example', '--json', '--migrations-table', 'host_migrations', '--features', 'core,api-keys'], env);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const { event_id } = JSON.parse(run.stdout) as { event_id: string };
    expect(await host.query(`SELECT type, subreddit FROM events WHERE id = '${event_id}'`)).toEqual([{ type: 'trends.surge', subreddit: 'typescript' }]);
    expect({ recorded: await recorded(), tables: await tables() }).toEqual(before);
  });

  it('refuses the standalone series on the host database without its table, naming TRENDHOOKS_MIGRATIONS_TABLE, and changes nothing', async () => {
    const before = { recorded: await recorded(), tables: await tables() };
    for (const args of [['events', 'emit', '--event', 'trends.surge', '--subreddit', 'typescript', '--example'], ['migrate']]) {
      const run = await trendhooks(args, env);
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr).toMatch(/^error: this database has trendhooks' tables but no trendhooks_migrations table.*--migrations-table NAME \(or TRENDHOOKS_MIGRATIONS_TABLE\).*nothing was changed\n$/);
    }
    // No empty trendhooks_migrations table left behind, nothing else created or recorded.
    expect({ recorded: await recorded(), tables: await tables() }).toEqual(before);
  });

  it('still refuses to start on secrets it cannot decrypt when the database has no settings table', async () => {
    await host.query(
      `INSERT INTO webhooks (id, customer_id, url, allow_nonstandard_port, secret, created_at)
       VALUES ('01ARZ3NDEKTSV4RRFFQ69G5FAV', 'cus_x', 'https://hooks.example.com/h', false, 'enc:v1:gone:AAAA', 0)`,
    );
    try {
      const run = await trendhooks(['keys', 'create', '--customer', 'acme', '--plan', 'business', '--migrations-table', 'host_migrations', '--features', 'core,api-keys'], env);
      expect(run).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error: cannot start: the database holds secrets this process cannot decrypt/) });
    } finally {
      await host.query("DELETE FROM webhooks WHERE id = '01ARZ3NDEKTSV4RRFFQ69G5FAV'");
    }
  });

  it('adds the features the host turns on later, recording them in the host table', async () => {
    const run = await trendhooks(['migrate', '--migrations-table', 'host_migrations'], env);
    expect(run).toMatchObject({ code: 0, stdout: expect.stringMatching(/^applied 3 migrations to .*: TrendhooksSettings\d+, TrendhooksPosts\d+, TrendhooksTrendSourcesUnreachable\d+\n$/) });
    expect(await recorded()).toContain('HostWidgets1700000000000');
    expect(await tables()).toEqual(expect.arrayContaining(['settings', 'posts', 'trend_sources', 'host_widgets']));
  });

  it('refuses a bad table name, an unknown feature, and features without a table, in one line', async () => {
    const bad = await trendhooks(['migrate', '--migrations-table', 'x;drop'], env);
    expect(bad).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error: bad configuration: TRENDHOOKS_MIGRATIONS_TABLE must be a table name[^\n]*\n$/) });
    const unknown = await trendhooks(['migrate', '--migrations-table', 'host_migrations', '--features', 'core,widgets'], env);
    expect(unknown).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error: bad configuration: TRENDHOOKS_FEATURES: unknown feature "widgets"; the features are core, api-keys, settings, posts\n$/) });
    const alone = await trendhooks(['migrate', '--features', 'core'], env);
    expect(alone).toMatchObject({ code: 1, stderr: expect.stringMatching(/set TRENDHOOKS_MIGRATIONS_TABLE \(--migrations-table\) too\n$/) });
    const standalone = await trendhooks(['migrate', '--migrations-table', 'trendhooks_migrations'], env);
    expect(standalone).toMatchObject({ code: 1, stderr: expect.stringMatching(/trendhooks_migrations is the standalone's/) });
  });
});
