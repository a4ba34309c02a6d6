import { DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CryptoModule, generateEncryptionKey, PaginationModule, parseEncryptionKeys, SQLITE_MIGRATIONS, TRENDHOOKS_ENTITIES, TrendhooksModule } from '../src/index';

/**
 * A host's bad setting stops the host at start-up with the setting's name, through forRoot and
 * forRootAsync alike: before, an empty CURSOR_SECRET started and answered every list 500 (the cause
 * only in the log), and an empty key ring started on a key made up for the process. No request is
 * made: nothing here depends on the database, which is one SQLite file the app never gets to migrate.
 */
describe('a host with a bad trendhooks setting does not start, and the error names the setting', () => {
  let dir: string;
  beforeAll(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-host-config-'))));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** The host's modules with `modules` in place of the good crypto and pagination settings. */
  function host(modules: { crypto?: DynamicModule; pagination?: DynamicModule }): DynamicModule {
    @Module({})
    class ConfigHostModule {}
    return {
      module: ConfigHostModule,
      imports: [
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database: path.join(dir, 'host.db'), entities: [...TRENDHOOKS_ENTITIES], migrations: SQLITE_MIGRATIONS, migrationsRun: false }),
        TrendhooksModule.forRoot(),
        modules.crypto ?? CryptoModule.forRoot({ keys: [generateEncryptionKey()] }),
        modules.pagination ?? PaginationModule.forRoot({ secrets: ['x'.repeat(20) + 'q7Lk2mZp9Rv4Tb8W'] }),
      ],
    };
  }

  async function startError(module: DynamicModule): Promise<string> {
    const app = await NestFactory.create(module, { logger: false, abortOnError: false }).catch((err: Error) => err);
    if (!(app instanceof Error)) {
      await app.close();
      return 'started';
    }
    return app.message;
  }

  it('starts with good settings (the cases below differ only in the one setting)', async () => {
    expect(await startError(host({}))).toBe('started');
  });

  describe('PaginationModule', () => {
    it('refuses an empty or short cursor secret at start-up, naming CURSOR_SECRET, from forRoot and forRootAsync', async () => {
      expect(await startError(host({ pagination: PaginationModule.forRoot({ secrets: [''] }) }))).toMatch(/^CURSOR_SECRET .*entry #1 has 0 characters; at least 32 are required/);
      const asyncShort = PaginationModule.forRootAsync({ useFactory: async () => ({ secrets: ['a'.repeat(40), 'short'] }) });
      expect(await startError(host({ pagination: asyncShort }))).toMatch(/^CURSOR_SECRET .*entry #2 has 5 characters/);
      expect(await startError(host({ pagination: PaginationModule.forRoot({ secrets: ['change-me-change-me-change-me-change-me'] }) }))).toMatch(/^CURSOR_SECRET entry #1 is a placeholder/);
    });
  });

  describe('CryptoModule', () => {
    it('refuses an empty or bad key ring at start-up, naming ENCRYPTION_KEYS, from forRoot and forRootAsync', async () => {
      expect(await startError(host({ crypto: CryptoModule.forRoot({ keys: [] }) }))).toMatch(/^ENCRYPTION_KEYS \(CryptoModule's keys\) is empty/);
      const asyncShort = CryptoModule.forRootAsync({ useFactory: async () => ({ keys: [{ id: 'k1', key: Buffer.alloc(16) }] }) });
      expect(await startError(host({ crypto: asyncShort }))).toMatch(/^ENCRYPTION_KEYS \(CryptoModule's keys\): key "k1" must be 32 bytes/);
      // The host's own parse of its setting (README's example) names it too.
      expect(() => parseEncryptionKeys('')).toThrow(/^ENCRYPTION_KEYS: no key given/);
    });
  });
});
