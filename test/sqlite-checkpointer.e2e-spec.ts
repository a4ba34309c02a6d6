import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..');

/** The child's start: a WAL database on DB_FILE, and `c`, a WalCheckpointer on it, started. */
const STARTED = `
  const Database = require('better-sqlite3');
  const { WalCheckpointer } = require('./dist/database/sqlite-checkpointer');
  const db = new Database(process.env.DB_FILE);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (x)');
  const c = new WalCheckpointer(db, process.env.DB_FILE, { minMs: 5, maxMs: 5 });
  c.start();`;

/**
 * The WAL checkpointer's thread never keeps a process alive: a process that started one (an app
 * on a SQLite file) and never stopped it (the app never closed) still exits when its own work is
 * done. A referenced thread held a whole CI test run open after its last test. Run from dist/
 * (the e2e global setup rebuilds it when stale) in a child process, whose exit is what is checked.
 */
describe('SQLite WAL checkpointer thread and process exit', () => {
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-checkpointer-'));
  });

  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function runChild(script: string): Promise<{ code: number | null; ms: number; out: string }> {
    return new Promise((resolve) => {
      const t0 = performance.now();
      const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, env: { ...process.env, DB_FILE: path.join(dir, 't.db') }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (out += c));
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.on('exit', (code) => {
        clearTimeout(killer);
        resolve({ code, ms: performance.now() - t0, out });
      });
    });
  }

  it('exits with a checkpointer still running (never stopped)', async () => {
    const r = await runChild(`${STARTED}
      setTimeout(() => { db.prepare('INSERT INTO t VALUES (1)').run(); console.log('running', c.running); }, 200);
    `);
    expect(r.out).toContain('running true');
    expect(r.code).toBe(0);
    expect(r.ms).toBeLessThan(10_000);
  });

  it('exits once stopped, after its last checkpoint', async () => {
    const r = await runChild(`${STARTED}
      setTimeout(async () => { await c.stop(); console.log('stopped', c.running, db.pragma('wal_autocheckpoint', { simple: true })); }, 200);
    `);
    expect(r.out).toContain('stopped false 1000');
    expect(r.code).toBe(0);
    expect(r.ms).toBeLessThan(10_000);
  });
});
