import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { TRENDHOOKS_DATA_SOURCE } from './data-source.token';
import { dialectOf, dialectProvider, UnsupportedDatabaseError } from './dialect';

abstract class GreetingStore {
  abstract greet(): string;
}
const shutdowns: string[] = [];
@Injectable()
class SqliteGreetings extends GreetingStore implements OnApplicationShutdown {
  greet() {
    return 'sqlite';
  }
  onApplicationShutdown() {
    shutdowns.push('sqlite');
  }
}
@Injectable()
class PostgresGreetings extends GreetingStore {
  greet() {
    return 'postgres';
  }
}

const fakeSource = (type: string) => ({ options: { type } }) as unknown as DataSource;

async function boot(type: string) {
  const mod = await Test.createTestingModule({
    providers: [{ provide: TRENDHOOKS_DATA_SOURCE, useValue: fakeSource(type) }, dialectProvider(GreetingStore, { sqlite: SqliteGreetings, postgres: PostgresGreetings })],
  }).compile();
  return mod;
}

describe('dialect', () => {
  it('maps the two supported drivers and refuses every other', () => {
    expect(dialectOf(fakeSource('better-sqlite3'))).toBe('sqlite');
    expect(dialectOf(fakeSource('postgres'))).toBe('postgres');
    for (const other of ['mysql', 'sqlite', 'cockroachdb', 'sqljs']) expect(() => dialectOf(fakeSource(other))).toThrow(UnsupportedDatabaseError);
  });

  it('provides the implementation for the data source dialect, with its lifecycle hooks', async () => {
    const sqlite = await boot('better-sqlite3');
    expect(sqlite.get(GreetingStore).greet()).toBe('sqlite');
    await sqlite.close();
    expect(shutdowns).toEqual(['sqlite']);
    const pg = await boot('postgres');
    expect(pg.get(GreetingStore).greet()).toBe('postgres');
    await pg.close();
  });

  it('fails while the module boots for an unsupported driver, naming it', async () => {
    await expect(boot('mysql')).rejects.toThrow(/SQLite \(better-sqlite3\) or PostgreSQL \(pg\); this data source uses the "mysql" driver/);
  });
});
