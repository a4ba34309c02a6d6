import { Global, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { CLOCK, Clock, InjectClock, SystemClock } from '../common/clock';
import { dialectProvider } from '../database/dialect';
import { InjectTrendhooksDataSource, TRENDHOOKS_DATA_SOURCE } from '../database/data-source.token';
import { TrendhooksModule } from './trendhooks.module';

abstract class WhichStore {
  abstract which(): string;
}
@Injectable()
class SqliteWhich extends WhichStore {
  constructor(@InjectTrendhooksDataSource() private readonly ds: DataSource) {
    super();
  }
  which() {
    return `sqlite:${String(this.ds.options.database)}`;
  }
}
@Injectable()
class PostgresWhich extends WhichStore {
  which() {
    return 'postgres';
  }
}
@Injectable()
class NeedsClock {
  constructor(@InjectClock() readonly clock: Clock) {}
}
/** A feature module that imports nothing: the data source and clock come from the global core module. */
@Module({ providers: [dialectProvider(WhichStore, { sqlite: SqliteWhich, postgres: PostgresWhich }), NeedsClock], exports: [WhichStore, NeedsClock] })
class FeatureModule {}

const fixed: Clock = { now: () => new Date('2030-01-02T03:04:05Z') };
const fakeSource = (type: string) => ({ name: 'fake', options: { type } }) as unknown as DataSource;

/** A connection under `name` the way TypeOrmCoreModule registers one (global), without a database behind it. */
function fakeConnection(name: string, type: string) {
  @Global()
  @Module({ providers: [{ provide: getDataSourceToken(name), useValue: fakeSource(type) }], exports: [getDataSourceToken(name)] })
  class FakeConnection {}
  return FakeConnection;
}

const hostConnection = () => TypeOrmModule.forRoot({ name: 'host', type: 'better-sqlite3', database: ':memory:' });

describe('TrendhooksModule', () => {
  it('provides the named connection of the host, one clock, and the stores for its dialect', async () => {
    const mod = await Test.createTestingModule({ imports: [hostConnection(), TrendhooksModule.forRoot({ dataSource: 'host' }), FeatureModule] }).compile();
    try {
      const host = mod.get<DataSource>(getDataSourceToken('host'));
      expect(mod.get(TRENDHOOKS_DATA_SOURCE)).toBe(host);
      expect(mod.get(WhichStore).which()).toBe('sqlite::memory:');
      expect(mod.get(CLOCK)).toBeInstanceOf(SystemClock);
      expect(mod.get(NeedsClock).clock).toBe(mod.get(CLOCK));
    } finally {
      await mod.close();
    }
  });

  it('takes the clock and the connection name through forRootAsync', async () => {
    const SETTINGS = Symbol('settings');
    @Module({ providers: [{ provide: SETTINGS, useValue: { clock: fixed } }], exports: [SETTINGS] })
    class SettingsModule {}
    const mod = await Test.createTestingModule({
      imports: [
        hostConnection(),
        TrendhooksModule.forRootAsync({ dataSource: 'host', imports: [SettingsModule], inject: [SETTINGS], useFactory: (s: { clock: Clock }) => ({ clock: s.clock }) }),
        FeatureModule,
      ],
    }).compile();
    try {
      expect(mod.get(NeedsClock).clock.now().toISOString()).toBe('2030-01-02T03:04:05.000Z');
      expect(mod.get(TRENDHOOKS_DATA_SOURCE)).toBe(mod.get(getDataSourceToken('host')));
    } finally {
      await mod.close();
    }
  });

  it('lets tests override the one clock for every module', async () => {
    const mod = await Test.createTestingModule({ imports: [hostConnection(), TrendhooksModule.forRoot({ dataSource: 'host' }), FeatureModule] })
      .overrideProvider(CLOCK)
      .useValue(fixed)
      .compile();
    try {
      expect(mod.get(NeedsClock).clock).toBe(fixed);
    } finally {
      await mod.close();
    }
  });

  it('uses a DataSource object handed over without any TypeORM connection registered', async () => {
    const ds = fakeSource('postgres');
    const mod = await Test.createTestingModule({ imports: [TrendhooksModule.forRoot({ dataSource: ds }), FeatureModule] }).compile();
    expect(mod.get(TRENDHOOKS_DATA_SOURCE)).toBe(ds);
    expect(mod.get(WhichStore).which()).toBe('postgres');
    await mod.close();
  });

  it('fails at boot on an unsupported driver, even with no store asking for the connection yet', async () => {
    const boot = Test.createTestingModule({ imports: [fakeConnection('legacy', 'mysql'), TrendhooksModule.forRoot({ dataSource: 'legacy' })] }).compile();
    await expect(boot).rejects.toThrow(/SQLite \(better-sqlite3\) or PostgreSQL \(pg\); this data source uses the "mysql" driver/);
  });

  it('names the missing connection instead of an injection error', async () => {
    await expect(Test.createTestingModule({ imports: [fakeConnection('other', 'postgres'), TrendhooksModule.forRoot({ dataSource: 'host' })] }).compile()).rejects.toThrow(
      /no TypeORM connection named "host"/,
    );
    await expect(Test.createTestingModule({ imports: [TrendhooksModule.forRoot()] }).compile()).rejects.toThrow(/no TypeORM connection \(the default one\)/);
  });
});
