import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Test } from '@nestjs/testing';
import Database from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { TrendhooksModule } from '../core/trendhooks.module';
import { dataSourceOptions, sqliteHandle } from './data-source';
import { SqliteCheckpointerService, STOP_GRACE_MS, WalCheckpointer } from './sqlite-checkpointer';

const tmpFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'th-checkpointer-spec-')), 'x.db');

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** About 2 MB of rows in one transaction: far more WAL frames than SQLite's 1,000-page auto-checkpoint. */
function writeMegabytes(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS t (x BLOB)');
  const insert = db.prepare('INSERT INTO t VALUES (randomblob(1000))');
  db.transaction(() => {
    for (let i = 0; i < 2000; i++) insert.run();
  })();
}

async function appOn(ds: DataSource) {
  const moduleRef = await Test.createTestingModule({ imports: [TrendhooksModule.forRoot({ dataSource: ds })] }).compile();
  await moduleRef.init();
  return moduleRef;
}

describe('SqliteCheckpointerService', () => {
  it('on a file opened with dataSourceOptions, checkpoints on its own thread instead of the writer, and hands checkpoints back on shutdown', async () => {
    const file = tmpFile();
    const ds = await new DataSource(dataSourceOptions({ type: 'sqlite', path: file }, [])).initialize();
    const db = sqliteHandle(ds);
    const app = await appOn(ds);
    try {
      expect(app.get(SqliteCheckpointerService).current?.running).toBe(true);
      // The writer's commits no longer copy the WAL into the file...
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      writeMegabytes(db);
      // ...the thread does: the database file itself (empty until a checkpoint) fills up.
      await until('the thread to checkpoint the WAL into the database file', () => fs.statSync(file).size > 1_000_000);
      await app.close();
      expect(app.get(SqliteCheckpointerService).current?.running).toBe(false);
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    } finally {
      await app.close();
      await ds.destroy();
    }
  });

  it("leaves a host's own SQLite DataSource, and an in-memory one, with SQLite's inline checkpoints", async () => {
    const file = tmpFile();
    const own = await new DataSource({ type: 'better-sqlite3', database: file, enableWAL: true, entities: [] }).initialize();
    const memory = await new DataSource(dataSourceOptions({ type: 'sqlite', path: ':memory:' }, [])).initialize();
    for (const ds of [own, memory]) {
      const app = await appOn(ds);
      try {
        expect(app.get(SqliteCheckpointerService).current).toBeNull();
        expect(sqliteHandle(ds).pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
      } finally {
        await app.close();
        await ds.destroy();
      }
    }
  });
});

describe('WalCheckpointer', () => {
  it('gives the writer inline checkpoints back while the WAL stays over the cap, and takes them again once it is under half of it', async () => {
    const file = tmpFile();
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (x BLOB)');
    const reader = new Database(file);
    const checkpointer = new WalCheckpointer(db, file, { minMs: 5, maxMs: 5, capFrames: 200 });
    checkpointer.start();
    try {
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      // A reader on an old snapshot: no checkpoint can copy the frames written after it.
      reader.exec('BEGIN');
      reader.prepare('SELECT COUNT(*) FROM t').get();
      writeMegabytes(db);
      await until('the writer to checkpoint inline again', () => checkpointer.inline);
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
      reader.exec('COMMIT');
      // Once every frame is checkpointed, the next commit starts the WAL over: it shrinks under the cap.
      const insert = db.prepare('INSERT INTO t VALUES (1)');
      await until('the WAL to start over under the cap', () => (insert.run(), !checkpointer.inline));
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    } finally {
      await checkpointer.stop();
      reader.close();
      db.close();
    }
  });

  it('stops within its grace period, its thread gone with its connection', async () => {
    const file = tmpFile();
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (x BLOB)');
    const checkpointer = new WalCheckpointer(db, file, { minMs: 5, maxMs: 5 });
    checkpointer.start();
    try {
      writeMegabytes(db);
      await new Promise((r) => setTimeout(r, 50));
      const t0 = performance.now();
      await checkpointer.stop();
      expect(performance.now() - t0).toBeLessThan(STOP_GRACE_MS);
      expect(checkpointer.running).toBe(false);
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
      // No other connection is left on the file: a TRUNCATE checkpoint is not kept busy by any.
      expect(db.pragma('wal_checkpoint(TRUNCATE)')).toEqual([{ busy: 0, log: 0, checkpointed: 0 }]);
    } finally {
      db.close();
    }
  });
});
