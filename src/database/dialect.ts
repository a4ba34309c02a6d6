import type { FactoryProvider, Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { TRENDHOOKS_DATA_SOURCE } from './data-source.token';

/** The databases trendhooks runs on. Every store has one implementation per dialect. */
export const DIALECTS = ['sqlite', 'postgres'] as const;
export type Dialect = (typeof DIALECTS)[number];

/**
 * A data source on a driver trendhooks has no stores for: thrown while the app boots, never at a
 * first query. `what` says where the name came from when it is not a data source's driver.
 */
export class UnsupportedDatabaseError extends Error {
  constructor(
    readonly driver: string,
    what = `this data source uses the "${driver}" driver`,
  ) {
    super(`trendhooks runs on SQLite (better-sqlite3) or PostgreSQL (pg); ${what}`);
    this.name = 'UnsupportedDatabaseError';
  }
}

/** The dialect of a TypeORM data source; anything but better-sqlite3 or postgres is refused. */
export function dialectOf(ds: DataSource): Dialect {
  const driver = String(ds.options.type);
  if (driver === 'postgres') return 'postgres';
  if (driver === 'better-sqlite3') return 'sqlite';
  throw new UnsupportedDatabaseError(driver);
}

/**
 * `dialect` when it is one of DIALECTS; any other name (from a JavaScript caller, or a config
 * built by hand) is refused, never taken for SQLite. `what` names it for the message.
 */
export function assertDialect(dialect: string, what: string): Dialect {
  if ((DIALECTS as readonly string[]).includes(dialect)) return dialect as Dialect;
  throw new UnsupportedDatabaseError(dialect, `${what} is "${dialect}", not ${DIALECTS.map((d) => `"${d}"`).join(' or ')}`);
}

/** What a DATABASE_URL names, per dialect: the SQLite file, or PostgreSQL's connection URL. */
export interface DatabaseLocations {
  sqlite: { path: string };
  postgres: { url: string };
}

/** The database one DATABASE_URL names (config's parseDatabaseUrl): `type` is its dialect. */
export type DatabaseConfig<D extends Dialect = Dialect> = { [K in D]: { type: K } & DatabaseLocations[K] }[D];

/** One function per dialect, each given its own shape of DatabaseConfig: a new dialect is a compile error until it has one. */
export type PerDatabase<R> = { [D in Dialect]: (db: DatabaseConfig<D>) => R };

/**
 * The configured database handled by its dialect's entry of `cases`, the way a data source's
 * store is chosen by dialectProvider. A `type` outside DIALECTS is refused.
 */
export function onDatabase<R>(db: DatabaseConfig, cases: PerDatabase<R>): R {
  const handle = cases[assertDialect(String(db.type), 'the database type')] as (db: DatabaseConfig) => R;
  return handle(db);
}

/** How a query's `i`-th parameter (from 0) is written in raw SQL, per dialect. */
export const SQL_PARAMETER: Record<Dialect, (i: number) => string> = {
  sqlite: () => '?',
  postgres: (i) => `$${i + 1}`,
};

/**
 * The one place a store's implementation is chosen: provides `token` (the store's abstract class)
 * as the implementation for the dialect of TRENDHOOKS_DATA_SOURCE (TrendhooksModule's connection),
 * built with the module's own injections. An unsupported driver fails while the app boots
 * (TrendhooksModule checks it, and so does this factory).
 */
export function dialectProvider<T>(token: abstract new (...args: never[]) => T, impls: Record<Dialect, Type<T>>): FactoryProvider<T> {
  return {
    provide: token,
    inject: [TRENDHOOKS_DATA_SOURCE, ModuleRef],
    useFactory: (ds: DataSource, moduleRef: ModuleRef) => moduleRef.create(impls[dialectOf(ds)]),
  };
}
