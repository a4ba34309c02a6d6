import { UnsupportedDatabaseError, type Dialect } from './dialect';
import { featureNames, parseFeatures, resolveFeatures, trendhooksMigrations } from './features';
import { POSTGRES_FEATURE_MIGRATIONS, POSTGRES_MIGRATIONS } from './migrations/postgres';
import { SQLITE_FEATURE_MIGRATIONS, SQLITE_MIGRATIONS } from './migrations/sqlite';

describe('features', () => {
  it('parses the CLI list; core may be left out, an unknown name is refused with the list', () => {
    expect(parseFeatures('core,api-keys')).toEqual({ apiKeys: true, settings: false, posts: false });
    expect(parseFeatures(' posts  settings ')).toEqual({ apiKeys: false, settings: true, posts: true });
    expect(parseFeatures('core')).toEqual({ apiKeys: false, settings: false, posts: false });
    expect(() => parseFeatures('core,widgets')).toThrow('unknown feature "widgets"; the features are core, api-keys, settings, posts');
  });

  it('turns every feature on unless switched off', () => {
    expect(resolveFeatures()).toEqual({ apiKeys: true, settings: true, posts: true });
    expect(featureNames({ settings: false })).toEqual(['core', 'api-keys', 'posts']);
  });

  it('lists core first, then the features switched on, never a standalone migration', () => {
    expect(trendhooksMigrations('sqlite', { apiKeys: false, settings: false, posts: false })).toEqual(SQLITE_FEATURE_MIGRATIONS.core);
    expect(trendhooksMigrations('postgres', { settings: false })).toEqual([...POSTGRES_FEATURE_MIGRATIONS.core, ...POSTGRES_FEATURE_MIGRATIONS.apiKeys, ...POSTGRES_FEATURE_MIGRATIONS.posts]);
    for (const [dialect, standalone] of [['sqlite', SQLITE_MIGRATIONS], ['postgres', POSTGRES_MIGRATIONS]] as const) {
      const all = trendhooksMigrations(dialect);
      expect(all).toHaveLength(13);
      for (const m of all) expect(standalone).not.toContain(m);
      // Names are unique across both series, so one migrations table can never confuse them.
      const names = [...all, ...standalone].map((m) => new m().name);
      expect(new Set(names).size).toBe(names.length);
    }
  });
});

describe('trendhooksMigrations on a dialect trendhooks has no migrations for', () => {
  it('refuses it by name instead of handing out the SQLite series', () => {
    expect(() => trendhooksMigrations('mysql' as Dialect)).toThrow(UnsupportedDatabaseError);
    expect(() => trendhooksMigrations('mysql' as Dialect)).toThrow(`trendhooksMigrations' dialect is "mysql", not "sqlite" or "postgres"`);
  });
});
