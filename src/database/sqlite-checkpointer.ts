import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Worker } from 'node:worker_threads';
import { DataSource } from 'typeorm';
import { InjectTrendhooksDataSource } from './data-source.token';
import { LatchableDatabase, latchBusyWaits } from './sqlite-busy-latch';

/**
 * The `prepareDatabase` of the SQLite options dataSourceOptions builds, and the mark of a data
 * source that gets a WalCheckpointer: a host's own DataSource (its own options) keeps SQLite's
 * inline auto-checkpoints, since its connection and its WAL policy are the host's. It also bounds
 * how long the connection freezes the process on a lock another process holds (latchBusyWaits).
 */
export function prepareTrendhooksSqlite(db: LatchableDatabase): void {
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  latchBusyWaits(db);
}

export interface WalCheckpointerOptions {
  /**
   * Bounds of the time between the thread's PASSIVE checkpoints (ms), which it adapts so that each
   * copies about `targetFrames` WAL frames (SQLite's own 1,000 by default).
   */
  minMs?: number;
  maxMs?: number;
  targetFrames?: number;
  /**
   * WAL frames past which the writer checkpoints inline again (SQLite's own wal_autocheckpoint)
   * until a checkpoint brings the WAL back under half of it.
   */
  capFrames?: number;
}

/** Longest stop() waits for the thread's last checkpoint before terminating it. */
export const STOP_GRACE_MS = 2000;

/** SQLite's default wal_autocheckpoint (pages): what the writer goes back to while the WAL is over the cap. */
const INLINE_AUTOCHECKPOINT = 1000;

interface Handle {
  open: boolean;
  pragma(s: string, options?: { simple: boolean }): unknown;
}

/**
 * The thread: its own connection to the file, a PASSIVE checkpoint every so often (never waits on
 * a lock, never blocks a writer or reader: it copies what no reader still needs and stops), and a
 * message when the WAL crosses the cap either way. Plain JavaScript evaluated as the worker's
 * source, so the same code runs from dist and under ts-jest; better-sqlite3 is required by the
 * path the app resolved.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true, timeout: 0 });
let over = false;
let interval = workerData.minMs;
let last = { log: 0, checkpointed: 0 };
let timer = null;
const tick = () => {
  let r;
  try {
    r = db.pragma('wal_checkpoint(PASSIVE)')[0];
  } catch (err) {
    // SQLITE_BUSY: another connection is checkpointing (several processes share the file); next tick.
    if (!/busy|locked/i.test(String(err && err.message))) throw err;
    return;
  }
  // r.log: frames in the WAL; a WAL whose every frame is checkpointed starts over at the writer's
  // next commit (then fewer frames than last time: all of them are new).
  const copied = r.log < last.log ? r.checkpointed : r.checkpointed - last.checkpointed;
  last = r;
  // About targetFrames per checkpoint, as SQLite's own: checkpointing a few frames at a time would
  // copy the pages every commit touches (the indexes' last pages) over and over.
  interval = Math.min(workerData.maxMs, Math.max(workerData.minMs, copied > 0 ? (interval * workerData.targetFrames) / copied : interval * 2));
  const left = r.log - r.checkpointed;
  if (!over && r.log > workerData.capFrames && left > 0) parentPort.postMessage({ inline: (over = true) });
  else if (over && r.log < workerData.capFrames / 2) parentPort.postMessage({ inline: (over = false) });
};
const loop = () => {
  tick();
  timer = setTimeout(loop, interval);
};
timer = setTimeout(loop, interval);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearTimeout(timer);
  // process.exit ends this thread only, whatever a last checkpoint or close did.
  try { tick(); } catch {} finally { try { db.close(); } catch {} process.exit(0); }
});
`;
/**
 * Moves a file database's WAL checkpoints off the event loop. SQLite checkpoints inline by
 * default: the COMMIT that takes the WAL past 1,000 pages copies them into the database file
 * (and syncs it) before returning, holding the one thread for milliseconds on the hot path. Here
 * the app's connection turns that off and a worker thread with its own connection runs PASSIVE
 * checkpoints instead, of about as many frames each. A PASSIVE checkpoint is the same kind SQLite runs
 * inline, so the WAL stays as bounded as before while the thread keeps up; when it does not (the
 * WAL past `capFrames` and frames left over: a reader holding an old snapshot, or writes faster
 * than the thread copies), the writer checkpoints inline again, which paces the writes, until the
 * WAL is back under half the cap. Several processes on one file each run one; a checkpoint that
 * finds another in progress skips a tick.
 */
export class WalCheckpointer {
  private worker: Worker | null = null;
  private exited: Promise<void> = Promise.resolve();
  private readonly logger = new Logger('WalCheckpointer');
  /** Whether the writer checkpoints inline for now (the WAL over the cap). */
  inline = false;

  constructor(
    private readonly db: Handle,
    private readonly file: string,
    private readonly options: WalCheckpointerOptions = {},
  ) {}

  get running(): boolean {
    return this.worker !== null;
  }

  start(): void {
    if (this.worker) return;
    this.db.pragma('wal_autocheckpoint = 0');
    const worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: {
        driver: require.resolve('better-sqlite3'),
        file: this.file,
        minMs: this.options.minMs ?? 10,
        maxMs: this.options.maxMs ?? 1000,
        targetFrames: this.options.targetFrames ?? INLINE_AUTOCHECKPOINT,
        capFrames: this.options.capFrames ?? 16 * INLINE_AUTOCHECKPOINT,
      },
    });
    worker.on('message', (m: { inline: boolean }) => this.setInline(m.inline));
    this.exited = new Promise<void>((resolve) => {
      worker.once('exit', () => resolve());
      worker.once('error', (err) => {
        // Without its checkpointer the WAL would only grow: the writer checkpoints inline again.
        this.logger.error(`WAL checkpointer thread failed, SQLite checkpoints inline again: ${err.message}`);
        this.worker = null;
        this.setInline(true);
      });
    });
    // Never what keeps a process alive (stop() ends it on shutdown). After the listeners: adding a
    // 'message' listener references a Worker again, and a process whose app was never closed then
    // never exited (a CI test run stayed open after its last test).
    worker.unref();
    this.worker = worker;
  }

  private setInline(inline: boolean): void {
    this.inline = inline;
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${inline ? INLINE_AUTOCHECKPOINT : 0}`);
  }

  /** Ends the thread after one last checkpoint, and gives the writer back SQLite's inline checkpoints. */
  async stop(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = null;
    worker.postMessage('stop');
    // A timer, not worker.ref(): it keeps the process alive while the thread finishes (awaiting an
    // unreferenced thread's exit alone would not), and it bounds the wait. A referenced thread that
    // never ended held a whole test run open after its last test in CI; one that has not ended by
    // STOP_GRACE_MS is terminated.
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([this.exited.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), STOP_GRACE_MS)))]);
    clearTimeout(timer);
    if (!ended) {
      this.logger.warn(`WAL checkpointer thread did not stop within ${STOP_GRACE_MS} ms; terminated`);
      await worker.terminate();
    }
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${INLINE_AUTOCHECKPOINT}`);
  }
}

/**
 * The WalCheckpointer of the trendhooks data source, when it is a better-sqlite3 file database in
 * WAL mode opened with dataSourceOptions (the standalone, a host that builds its options with it);
 * a host's own DataSource, an in-memory database, or PostgreSQL: nothing. Started when the module
 * initialises, stopped on application shutdown (after every module's onModuleDestroy: the delivery
 * worker's last writes are still checkpointed off the loop).
 */
@Injectable()
export class SqliteCheckpointerService implements OnModuleInit, OnApplicationShutdown {
  private checkpointer: WalCheckpointer | null = null;

  constructor(@InjectTrendhooksDataSource() private readonly ds: DataSource) {}

  onModuleInit(): void {
    // Only the SQLite options dataSourceOptions builds carry this hook: it marks the driver and
    // trendhooks' own connection at once (a host's DataSource keeps its own WAL policy).
    const o = this.ds.options as { prepareDatabase?: unknown; database?: unknown };
    if (o.prepareDatabase !== prepareTrendhooksSqlite) return;
    if (o.database === ':memory:' || o.database === '') return;
    const db = (this.ds.driver as unknown as { databaseConnection: Handle & { name: string } }).databaseConnection;
    if (String(db.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') return;
    this.checkpointer = new WalCheckpointer(db, db.name);
    this.checkpointer.start();
  }

  /** For tests: the running checkpointer, if this data source has one. */
  get current(): WalCheckpointer | null {
    return this.checkpointer;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.checkpointer?.stop();
  }
}
