import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Database as SqliteDatabase, Statement as SqliteStatement } from 'better-sqlite3';
import type { Pool } from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { assertInstalled } from '../common/optional-package';
import { dialectOf, onDatabase, type DatabaseConfig, type Dialect } from './dialect';
import { resolveFeatures, trendhooksMigrations, type TrendhooksFeatures } from './features';
import { POSTGRES_MIGRATIONS } from './migrations/postgres';
import { SQLITE_MIGRATIONS } from './migrations/sqlite';
import { prepareTrendhooksSqlite } from './sqlite-checkpointer';


/**
 * @internal Not in the published types (stripInternal): its type is better-sqlite3's, which a host need not have.
 * The better-sqlite3 handle under TypeORM: the one connection SQLite work shares, for statements
 * prepared once and multi-statement writes as synchronous transactions (an async TypeORM
 * transaction there would take in other requests' statements).
 */
export function sqliteHandle(ds: DataSource): SqliteDatabase {
  return (ds.driver as unknown as { databaseConnection: SqliteDatabase }).databaseConnection;
}

/** Raw statements by handle (a data source destroyed and initialised again has a new one), then by SQL text. */
const rawStatements = new WeakMap<SqliteDatabase, Map<string, SqliteStatement<unknown[], unknown[]>>>();

/**
 * @internal Like sqliteHandle. `sql` prepared once per connection on the better-sqlite3 handle, in
 * raw mode (rows as arrays): a read on a hot path without TypeORM's query runner per call or an
 * object per row. Errors are better-sqlite3's own (SQLITE_BUSY …), which the database-unavailable
 * classifier reads as it reads TypeORM's wrapped ones.
 */
export function rawStatement(ds: DataSource, sql: string): SqliteStatement<unknown[], unknown[]> {
  const handle = sqliteHandle(ds);
  let bySql = rawStatements.get(handle);
  if (!bySql) rawStatements.set(handle, (bySql = new Map()));
  let stmt = bySql.get(sql);
  if (!stmt) bySql.set(sql, (stmt = handle.prepare<unknown[], unknown[]>(sql).raw(true)));
  return stmt;
}

/**
 * @internal Like sqliteHandle. A store's statements, prepared by `prepare` once per connection: a
 * statement belongs to the better-sqlite3 handle that prepared it, and a data source destroyed and
 * initialised again has a new handle (the old one closed), so they are prepared again for it.
 */
export class StatementsPerHandle<T> {
  private handle?: SqliteDatabase;
  private statements?: T;

  constructor(
    private readonly ds: DataSource,
    private readonly prepare: (db: SqliteDatabase) => T,
  ) {}

  get(): T {
    const db = sqliteHandle(this.ds);
    if (this.handle !== db || this.statements === undefined) {
      this.statements = this.prepare(db);
      this.handle = db;
    }
    return this.statements;
  }
}

/** @internal The node-postgres pool under TypeORM (its `options` are the connection settings); not in the published types, like sqliteHandle. */
export function pgPool(ds: DataSource): Pool {
  return (ds.driver as unknown as { master: Pool }).master;
}

/**
 * Creates the SQLite file 0600 before SQLite does (it would use 0644 under the usual umask; its
 * -wal and -shm files copy the database file's mode), and tightens an existing one that others
 * may read: the file holds customers' data and, encrypted, their signing secrets. Opened without
 * following a symbolic link (O_NOFOLLOW), and refused when it, or its -wal or -shm file, is a
 * link or not a regular file, or belongs to another user: such a file could have been planted
 * to receive the data, or be read by its owner.
 */
export function createPrivateFile(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new Error(`SQLite file ${file} is a symbolic link; point DATABASE_URL at the file itself`, { cause: err });
    throw err;
  }
  try {
    const st = fs.fstatSync(fd);
    const problem = foreignFileProblem(st);
    if (problem) throw new Error(`SQLite file ${file} ${problem}`);
    if ((st.mode & 0o077) !== 0) fs.fchmodSync(fd, 0o600);
  } finally {
    fs.closeSync(fd);
  }
  for (const side of [`${file}-wal`, `${file}-shm`]) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(side);
    } catch {
      continue; // SQLite creates it, with the database file's mode and owner
    }
    const problem = st.isSymbolicLink() ? 'is a symbolic link' : foreignFileProblem(st);
    if (problem) throw new Error(`SQLite file ${side} ${problem}`);
  }
}

/** Why a database file must not be opened, or null: not a regular file, or another user's (no uids on Windows: not checked). */
function foreignFileProblem(st: fs.Stats): string | null {
  if (!st.isFile()) return 'is not a regular file';
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return `belongs to uid ${st.uid}, not to this process's user (uid ${uid}); refusing a file another user could have planted`;
  return null;
}

/**
 * A host's database: trendhooks' per-feature migrations (trendhooksMigrations) recorded in the
 * host's own migrations table, beside the host's own.
 */
export interface HostSchema {
  migrationsTable: string;
  features: TrendhooksFeatures;
}

/** The standalone's migrations table, holding SQLITE_/POSTGRES_MIGRATIONS. */
export const STANDALONE_MIGRATIONS_TABLE = 'trendhooks_migrations';

/**
 * TypeORM options for one DATABASE_URL and the entities the caller mapped (the composition root's
 * TRENDHOOKS_ENTITIES or trendhooksEntities(features)). Migrations are never run implicitly from
 * here: the standalone's series in `trendhooks_migrations`, or with `host` the features' series in
 * the host's table.
 */
export function dataSourceOptions(db: DatabaseConfig, entities: DataSourceOptions['entities'], host: HostSchema | null = null): DataSourceOptions {
  const migrationsTableName = host?.migrationsTable ?? STANDALONE_MIGRATIONS_TABLE;
  const migrations = (dialect: Dialect, standalone: MigrationClasses) => (host ? trendhooksMigrations(dialect, resolveFeatures(host.features)) : standalone);
  return onDatabase<DataSourceOptions>(db, {
    postgres: (pg) => {
      // TypeORM requires pg when the data source initialises; its own error for a missing driver is its wording, not ours.
      assertInstalled('pg', 'DATABASE_URL names a PostgreSQL database');
      return {
        type: 'postgres',
        url: pg.url,
        entities,
        migrations: migrations('postgres', POSTGRES_MIGRATIONS),
        migrationsTableName,
        synchronize: false,
        logging: false,
        // Pool size: API handlers + delivery worker share one pool per process.
        extra: { max: 20, connectionTimeoutMillis: 5000 },
      };
    },
    sqlite: (file) => {
      if (file.path !== ':memory:') createPrivateFile(file.path);
      return {
        type: 'better-sqlite3',
        database: file.path,
        entities,
        migrations: migrations('sqlite', SQLITE_MIGRATIONS),
        migrationsTableName,
        synchronize: false,
        logging: false,
        // WAL lets the API read while the worker writes; a busy timeout instead of SQLITE_BUSY errors.
        // better-sqlite3 waits for the lock synchronously, freezing the process's event loop: our own
        // write transactions last milliseconds, so 2 s is ample, and a longer hold (another process
        // holding the file) answers a clean 503 instead of stalling every request — past Node's 5 s
        // keep-alive timeout, a frozen server drops the idle connections clients just reused.
        enableWAL: true,
        timeout: 2000,
        // synchronous = NORMAL, foreign keys on; also what marks the data source for a WAL checkpointer
        // thread (SqliteCheckpointerService).
        prepareDatabase: prepareTrendhooksSqlite,
      };
    },
  });
}

type MigrationClasses = NonNullable<DataSourceOptions['migrations']>;

/**
 * Runs pending migrations. On PostgreSQL several processes may start at once, so the run is
 * serialised by an advisory lock; the losers then find nothing pending.
 */
export async function runMigrations(ds: DataSource): Promise<string[]> {
  await refuseHostDatabase(ds);
  return MIGRATION_RUNS[dialectOf(ds)](ds);
}

/**
 * The standalone series on a host's database (trendhooks' tables there, recorded in the host's own
 * migrations table) would replay them from the first ("table webhooks already exists") and leave
 * an empty trendhooks_migrations table behind: refused before anything is created.
 */
async function refuseHostDatabase(ds: DataSource): Promise<void> {
  if (ds.options.migrationsTableName !== STANDALONE_MIGRATIONS_TABLE) return;
  const runner = ds.createQueryRunner();
  try {
    if ((await runner.hasTable(STANDALONE_MIGRATIONS_TABLE)) || !(await runner.hasTable('webhooks'))) return;
  } finally {
    await runner.release();
  }
  throw new HostDatabaseError(
    `this database has trendhooks' tables but no ${STANDALONE_MIGRATIONS_TABLE} table: a host app's database, whose migrations table records them. ` +
      'Name it with --migrations-table NAME (or TRENDHOOKS_MIGRATIONS_TABLE), and its features with --features (TRENDHOOKS_FEATURES); nothing was changed',
  );
}

/** A command pointed at a host's database without its migrations table (refuseHostDatabase). */
export class HostDatabaseError extends Error {
  override name = 'HostDatabaseError';
}

const MIGRATION_RUNS: Record<Dialect, (ds: DataSource) => Promise<string[]>> = {
  sqlite: async (ds) => {
    // Two processes opening a new SQLite file at once (e.g. two CLI commands) race: the loser's
    // deferred transaction fails ("database is locked" / "already exists") and is rolled back
    // whole; on the next try the winner's migrations are simply recorded as applied.
    for (let attempt = 1; ; attempt++) {
      try {
        return (await ds.runMigrations({ transaction: 'all' })).map((m) => m.name);
      } catch (err) {
        if (attempt >= 5 || !/database is locked|SQLITE_BUSY|already exists/i.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 100 * attempt + Math.random() * 100));
      }
    }
  },
  postgres: async (ds) => {
    const runner = ds.createQueryRunner();
    await runner.connect();
    try {
      await runner.query('SELECT pg_advisory_lock(7254031)');
      try {
        return (await ds.runMigrations({ transaction: 'all' })).map((m) => m.name);
      } finally {
        await runner.query('SELECT pg_advisory_unlock(7254031)');
      }
    } finally {
      await runner.release();
    }
  },
};

/** SQL the entities would need beyond what the migrations built (and its reverse): no `up` means no drift. */
export async function schemaDrift(ds: DataSource): Promise<{ up: string[]; down: string[] }> {
  const sql = await ds.driver.createSchemaBuilder().log();
  return { up: sql.upQueries.map((q) => q.query), down: sql.downQueries.map((q) => q.query).reverse() };
}
