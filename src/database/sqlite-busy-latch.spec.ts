import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { latchBusyWaits } from './sqlite-busy-latch';

/** A file another connection can lock, and the app's connection with a busy timeout of `timeoutMs`. */
function setup(timeoutMs: number) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'th-busy-latch-')), 'x.db');
  const app = new Database(file, { timeout: timeoutMs });
  app.pragma('journal_mode = WAL');
  app.exec('CREATE TABLE t (x INTEGER)');
  const holder = new Database(file, { timeout: 0 });
  return { file, app, holder, done: () => { app.close(); holder.close(); fs.rmSync(path.dirname(file), { recursive: true, force: true }); } };
}

/** Runs `f` and answers how long it took and the SQLite code it failed with, if any. */
function timed(f: () => unknown): { ms: number; code?: string } {
  const t0 = performance.now();
  try {
    f();
    return { ms: performance.now() - t0 };
  } catch (err) {
    return { ms: performance.now() - t0, code: (err as { code?: string }).code };
  }
}

describe('latchBusyWaits', () => {
  it('after one full wait on a held lock, the statements behind it fail at once until the cool-down ends, then wait again', () => {
    const { app, holder, done } = setup(300);
    // Real time, which the test moves forward past the cool-down instead of sleeping.
    let skipped = 0;
    latchBusyWaits(app, { coolDownMs: 1000, now: () => performance.now() + skipped });
    const insert = app.prepare('INSERT INTO t VALUES (1)');
    try {
      holder.exec('BEGIN EXCLUSIVE');
      // The first write waits the whole timeout and fails.
      const first = timed(() => insert.run());
      expect(first.code).toBe('SQLITE_BUSY');
      expect(first.ms).toBeGreaterThanOrEqual(250);
      // Behind it: no wait at all, through prepared statements and exec alike.
      const second = timed(() => insert.run());
      const third = timed(() => app.exec('INSERT INTO t VALUES (2)'));
      expect(second).toEqual({ ms: expect.any(Number), code: 'SQLITE_BUSY' });
      expect(third.code).toBe('SQLITE_BUSY');
      expect(second.ms).toBeLessThan(100);
      expect(third.ms).toBeLessThan(100);
      // Reads are not blocked by the writer in WAL mode, latched or not.
      expect(app.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 });
      // Past the cool-down the full timeout is back: a lock released within it is waited for.
      skipped += 1000;
      expect(app.pragma('busy_timeout', { simple: true })).toBe(0);
      holder.exec('ROLLBACK');
      expect(timed(() => insert.run()).code).toBeUndefined();
      expect(app.pragma('busy_timeout', { simple: true })).toBe(300);
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK');
      done();
    }
  });

  it('a refusal that waited for nothing (SQLITE_BUSY_SNAPSHOT) does not trip it', () => {
    const { app, holder, done } = setup(300);
    latchBusyWaits(app, { coolDownMs: 60_000 });
    try {
      // A deferred transaction that read, then another connection commits: its write is refused at once.
      app.exec('BEGIN');
      app.prepare('SELECT count(*) FROM t').get();
      holder.exec('INSERT INTO t VALUES (9)');
      const refused = timed(() => app.prepare('INSERT INTO t VALUES (1)').run());
      app.exec('ROLLBACK');
      expect(refused.code).toBe('SQLITE_BUSY_SNAPSHOT');
      expect(app.pragma('busy_timeout', { simple: true })).toBe(300);
      expect(timed(() => app.prepare('INSERT INTO t VALUES (1)').run()).code).toBeUndefined();
    } finally {
      done();
    }
  });

  it('a transaction whose BEGIN IMMEDIATE waited the whole timeout trips it too, and the ones behind it fail at once', () => {
    const { app, holder, done } = setup(300);
    latchBusyWaits(app, { coolDownMs: 60_000 });
    // better-sqlite3 runs a transaction's BEGIN on a statement of its own, not one from prepare.
    const tx = app.transaction(() => app.prepare('INSERT INTO t VALUES (1)').run());
    try {
      holder.exec('BEGIN EXCLUSIVE');
      const first = timed(() => tx.immediate());
      expect(first.code).toBe('SQLITE_BUSY');
      expect(first.ms).toBeGreaterThanOrEqual(250);
      // Every variant, and the variants each carries (better-sqlite3's types leave those out).
      const carried = tx.deferred as unknown as typeof tx;
      for (const variant of [tx.immediate, tx, tx.exclusive, carried.immediate]) {
        const behind = timed(() => variant());
        expect(behind.code).toBe('SQLITE_BUSY');
        expect(behind.ms).toBeLessThan(100);
      }
      holder.exec('ROLLBACK');
      expect(timed(() => tx.immediate()).code).toBeUndefined();
      expect((carried as unknown as { database: unknown }).database).toBe(app);
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK');
      done();
    }
  });

  it('installs once, and leaves a connection that never waits alone', () => {
    const { app, done } = setup(300);
    try {
      latchBusyWaits(app);
      const prepare = app.prepare;
      latchBusyWaits(app);
      expect(app.prepare).toBe(prepare);
      const never = new Database(':memory:', { timeout: 0 });
      const original = never.prepare;
      latchBusyWaits(never);
      expect(never.prepare).toBe(original);
      never.close();
    } finally {
      done();
    }
  });
});
