import type { DataSource } from 'typeorm';
import { UnsupportedDatabaseError } from '../database/dialect';
import { SettingsStore } from './settings.store';

function source(type: string) {
  const query = jest.fn(async (_sql: string, _params?: unknown[]) => [] as unknown[]);
  return { ds: { options: { type }, query } as unknown as DataSource, query };
}

describe('SettingsStore per dialect', () => {
  it('writes each dialect its own SQL', async () => {
    for (const [type, table, param] of [
      ['better-sqlite3', 'sqlite_master', 'VALUES (?, ?)'],
      ['postgres', 'information_schema.tables', 'VALUES ($1, $2)'],
    ] as const) {
      const { ds, query } = source(type);
      const store = new SettingsStore(ds);
      await store.exists();
      await store.insertIfAbsent('k', 'v');
      expect(query.mock.calls[0][0]).toContain(table);
      expect(query.mock.calls[1][0]).toContain(param);
    }
  });

  it('refuses an unsupported driver at boot and runs no query for it as SQLite', async () => {
    const { ds, query } = source('mysql');
    const store = new SettingsStore(ds);
    await expect(store.exists()).rejects.toThrow('this data source uses the "mysql" driver');
    await expect(store.insertIfAbsent('k', 'v')).rejects.toThrow(UnsupportedDatabaseError);
    expect(query).not.toHaveBeenCalled();
    expect(() => store.onModuleInit()).toThrow(UnsupportedDatabaseError);
  });
});
