import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from './data-source';
import type { DatabaseConfig } from './dialect';
import { UnsupportedDatabaseError } from './dialect';

describe('a database trendhooks does not run on', () => {
  it('is refused by runMigrations, which runs nothing (no SQLite retry loop on it)', async () => {
    const ds = { options: { type: 'mysql' }, runMigrations: jest.fn(async () => []), createQueryRunner: jest.fn() } as unknown as DataSource;
    await expect(runMigrations(ds)).rejects.toThrow(UnsupportedDatabaseError);
    await expect(runMigrations(ds)).rejects.toThrow('this data source uses the "mysql" driver');
    expect(ds.runMigrations).not.toHaveBeenCalled();
    expect(ds.createQueryRunner).not.toHaveBeenCalled();
  });

  it('gets no data source options (no SQLite file created for it)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trendhooks-dialect-'));
    try {
      const db = { type: 'mysql', path: path.join(dir, 'x.db'), url: 'mysql://h/db' } as unknown as DatabaseConfig;
      expect(() => dataSourceOptions(db, [])).toThrow(UnsupportedDatabaseError);
      expect(() => dataSourceOptions(db, [])).toThrow('the database type is "mysql", not "sqlite" or "postgres"');
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the two it runs on get their own driver', () => {
    expect(dataSourceOptions({ type: 'sqlite', path: ':memory:' }, []).type).toBe('better-sqlite3');
    expect(dataSourceOptions({ type: 'postgres', url: 'postgres://h/db' }, []).type).toBe('postgres');
  });
});
