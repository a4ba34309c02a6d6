import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { HttpAdapterName } from '../../src/config/config';
import type { DatabaseConfig } from '../../src/database/dialect';

/**
 * The e2e suites run once per database. PostgreSQL is required in CI (CI=true); elsewhere a
 * missing server is skipped with a loud warning. Each suite gets a database of its own, so suites
 * run in parallel without sharing rows, and it is dropped afterwards.
 */
export const PG_ADMIN_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  name: 'sqlite' | 'postgres';
  create(): Promise<DatabaseConfig>;
  drop(): Promise<void>;
}

/**
 * A database another app (or the test) already created: a second app on it shares its rows, and
 * dropping it stays the creator's job.
 */
export function existingDatabase(config: DatabaseConfig): TestDatabase {
  return { name: config.type, create: async () => config, drop: async () => undefined };
}

let pgAvailable: Promise<boolean> | undefined;

async function probePg(): Promise<boolean> {
  const client = new Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (err) {
    if (process.env.CI === 'true') {
      throw new Error(`PostgreSQL is required in CI but ${PG_ADMIN_URL} is unreachable: ${(err as Error).message}`, { cause: err });
    }
    console.warn(
      `\n\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n` +
        `!! PostgreSQL at ${PG_ADMIN_URL} is unreachable: the PostgreSQL half of the e2e suite is SKIPPED.\n` +
        `!! Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start\n` +
        `!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n`,
    );
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function isPgAvailable(): Promise<boolean> {
  pgAvailable ??= probePg();
  return pgAvailable;
}

function sqliteDb(): TestDatabase {
  let dir: string | undefined;
  return {
    name: 'sqlite',
    async create() {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-e2e-'));
      return { type: 'sqlite', path: path.join(dir, 'trendhooks.db') };
    },
    async drop() {
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function pgDb(): TestDatabase {
  const dbName = `th_e2e_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new Client({ connectionString: PG_ADMIN_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  return {
    name: 'postgres',
    async create() {
      await admin(`CREATE DATABASE ${dbName}`);
      const url = new URL(PG_ADMIN_URL);
      url.pathname = `/${dbName}`;
      return { type: 'postgres', url: url.toString() };
    },
    async drop() {
      await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    },
  };
}

/**
 * For `describe.each`: SQLite always, PostgreSQL when global-setup found it (it sets
 * TRENDHOOKS_TEST_PG; in CI it fails the run instead of getting here without it).
 */
export function testDatabases(): [string, () => TestDatabase][] {
  const dbs: [string, () => TestDatabase][] = [['sqlite', sqliteDb]];
  if (process.env.TRENDHOOKS_TEST_PG !== '0') dbs.push(['postgres', pgDb]);
  return dbs;
}

/**
 * For `describe.each` over databases and HTTP adapters: every database under express, and under
 * fastify (HTTP_ADAPTER=fastify). Labels read "sqlite/express".
 */
export function testTargets(adapters: readonly HttpAdapterName[] = ['express', 'fastify']): [string, () => TestDatabase, HttpAdapterName][] {
  const out: [string, () => TestDatabase, HttpAdapterName][] = [];
  for (const adapter of adapters) for (const [name, make] of testDatabases()) out.push([`${name}/${adapter}`, make, adapter]);
  return out;
}
