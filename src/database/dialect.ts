import type { FactoryProvider, Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { TRENDHOOKS_DATA_SOURCE } from './data-source.token';

/** The databases trendhooks runs on. Every store has one implementation per dialect. */
export const DIALECTS = ['sqlite', 'postgres'] as const;
export type Dialect = (typeof DIALECTS)[number];

/** A data source on a driver trendhooks has no stores for: thrown while the app boots, never at a first query. */
export class UnsupportedDatabaseError extends Error {
  constructor(readonly driver: string) {
    super(`trendhooks runs on SQLite (better-sqlite3) or PostgreSQL (pg); this data source uses the "${driver}" driver`);
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
