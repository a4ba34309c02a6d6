import type { Type } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '../../src/database/data-source';
import { Dialect, dialectOf } from '../../src/database/dialect';
import { TRENDHOOKS_ENTITIES } from '../../src/entities';
import type { TestDatabase } from '../support/databases';

/** What a conformance suite gets: the store under test and the migrated database it runs on (for seeding and checks). */
export interface StoreFixture<T> {
  readonly store: T;
  readonly ds: DataSource;
}

/** A fresh migrated database for one describe block. Registers its own beforeAll/afterAll. */
export function databaseFixture(makeDb: () => TestDatabase): { readonly ds: DataSource } {
  const db = makeDb();
  let ds: DataSource | undefined;
  beforeAll(async () => {
    ds = new DataSource(dataSourceOptions(await db.create(), TRENDHOOKS_ENTITIES));
    await ds.initialize();
    await runMigrations(ds);
  });
  afterAll(async () => {
    await ds?.destroy();
    await db.drop();
  });
  return {
    get ds() {
      if (!ds) throw new Error('the database fixture is not ready (used outside a test?)');
      return ds;
    },
  };
}

/**
 * databaseFixture plus the store implementation for its dialect (as dialectProvider would pick it),
 * built on it (`make`: for a store that asks other stores too).
 */
export function storeFixture<T>(makeDb: () => TestDatabase, impls: Record<Dialect, Type<T>>, make = (impl: Type<T>, ds: DataSource): T => new impl(ds)): StoreFixture<T> {
  const db = databaseFixture(makeDb);
  let store: T | undefined;
  beforeAll(() => {
    store = make(impls[dialectOf(db.ds)], db.ds);
  });
  return {
    get store() {
      if (!store) throw new Error('the store fixture is not ready (used outside a test?)');
      return store;
    },
    get ds() {
      return db.ds;
    },
  };
}

let seq = 0;
const run = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;

/** A name no other test of the run uses, at most `max` characters. */
export function uniqueName(prefix: string, max = 21): string {
  return `${prefix}${run}${(seq++).toString(36)}`.slice(-max).toLowerCase();
}
