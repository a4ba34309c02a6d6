/**
 * better-sqlite3 waits for a lock synchronously: while another process holds the file, each write
 * statement freezes the whole event loop for the busy timeout before it fails. Statements that
 * queue up behind one another chain those freezes, and past Node's 5 s keep-alive timeout a
 * frozen server drops the idle connections its clients have just reused (the request is already
 * on the wire; the timer runs first when the loop wakes).
 *
 * The latch bounds the freeze: once a statement has waited the whole busy timeout and failed,
 * the connection stops waiting (busy_timeout 0) for `coolDownMs`, so the statements behind it fail
 * at once (a clean 503 in the API, a retry in the worker) and the loop serves everything else;
 * the first statement after the cool-down waits again with the full timeout. A lock that is
 * released within the timeout is waited for as before: only a hold longer than it trips the latch.
 */

/** The parts of a better-sqlite3 Database the latch wraps. */
export interface LatchableDatabase {
  pragma(source: string, options?: { simple?: boolean }): unknown;
  prepare(source: string): unknown;
  exec(source: string): unknown;
  /** better-sqlite3's: runs BEGIN on a statement of its own, out of prepare's reach. */
  transaction?(fn: (...args: never[]) => unknown): unknown;
}

/** A better-sqlite3 transaction function: each variant begins differently and carries the others. */
type Transaction = ((...args: unknown[]) => unknown) & Record<'default' | 'deferred' | 'immediate' | 'exclusive', (...args: unknown[]) => unknown> & { database: unknown };

export interface BusyLatchOptions {
  /** How long the connection fails fast after a full wait (ms). Default 1000. */
  coolDownMs?: number;
  /** Monotonic milliseconds. */
  now?: () => number;
}

export const BUSY_LATCH_COOL_DOWN_MS = 1000;

const LATCHED = Symbol('trendhooks:busy-latch');
const STATEMENT_METHODS = ['run', 'get', 'all'] as const;

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** Installs the latch on `db` (once; a second call is a no-op). Its busy timeout is read from the connection. */
export function latchBusyWaits(db: LatchableDatabase, options: BusyLatchOptions = {}): void {
  const target = db as LatchableDatabase & { [LATCHED]?: true };
  if (target[LATCHED]) return;
  target[LATCHED] = true;
  const coolDownMs = options.coolDownMs ?? BUSY_LATCH_COOL_DOWN_MS;
  const now = options.now ?? (() => performance.now());
  const timeoutMs = Number(db.pragma('busy_timeout', { simple: true }));
  if (!(timeoutMs > 0)) return; // nothing to bound: the connection never waits
  let latchedUntil = 0;

  const guard = <A extends unknown[], R>(fn: (this: unknown, ...args: A) => R) =>
    function (this: unknown, ...args: A): R {
      if (latchedUntil !== 0 && now() >= latchedUntil) {
        latchedUntil = 0;
        db.pragma(`busy_timeout = ${timeoutMs}`);
      }
      const t0 = latchedUntil === 0 ? now() : 0;
      try {
        return fn.apply(this, args);
      } catch (err) {
        // Only a full wait trips it: SQLITE_BUSY_SNAPSHOT and other immediate refusals waited for nothing.
        if (latchedUntil === 0 && isBusy(err) && now() - t0 >= timeoutMs / 2) {
          latchedUntil = now() + coolDownMs;
          db.pragma('busy_timeout = 0');
        }
        throw err;
      }
    };

  const prepare = db.prepare;
  db.prepare = function (this: unknown, source: string) {
    const stmt = prepare.call(this, source) as Record<string, unknown>;
    for (const m of STATEMENT_METHODS) {
      const original = stmt[m];
      if (typeof original === 'function') stmt[m] = guard(original as (this: unknown, ...args: unknown[]) => unknown);
    }
    return stmt;
  };
  db.exec = guard(db.exec as (this: unknown, source: string) => unknown);

  // A write transaction begun IMMEDIATE waits for the lock in its BEGIN, not in a statement of its
  // own: each variant of the transaction function is guarded as a whole (the statements inside
  // are guarded too; whichever waited the timeout trips it, once).
  const transaction = db.transaction;
  if (typeof transaction !== 'function') return;
  db.transaction = function (this: unknown, fn: (...args: never[]) => unknown) {
    const tx = transaction.call(this, fn) as Transaction;
    const variants = (['default', 'deferred', 'immediate', 'exclusive'] as const).map((v) => [v, guard(tx[v])] as const);
    const properties: PropertyDescriptorMap = { database: { value: tx.database, enumerable: true } };
    for (const [v, f] of variants) properties[v] = { value: f };
    for (const [, f] of variants) Object.defineProperties(f, properties);
    return variants[0][1];
  };
}
