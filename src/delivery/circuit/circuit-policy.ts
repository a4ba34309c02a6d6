import type { SendOutcome } from '../transport/delivery-transport';

/**
 * A circuit breaker per (customer, destination): the pure state machine. No I/O, no clock of its
 * own; `DestinationCircuitBreaker` keeps the rows in the database and asks these functions.
 *
 *   closed ──(failures in a row)──▶ throttled ──(as many again)──▶ open ──(pause over)──▶ half_open
 *      ▲                                                           ▲                        │
 *      └──────────────── any answer from the destination ──────────┴── the probe fails ◀────┘
 *
 * Only failures that reached no HTTP answer count (timeouts, refused or reset connections, DNS
 * and TLS failures): they are what holds a worker's slot for up to the attempt timeout. A 4xx or
 * 5xx is an answer: the destination is up, and it resets the count.
 */
export type CircuitState = 'closed' | 'throttled' | 'open' | 'half_open';

export interface CircuitRow {
  state: CircuitState;
  consecutiveFailures: number;
  /** open: the end of the pause; half_open: the probe's deadline (after it, another probe may go); else null. */
  openedUntil: Date | null;
  /** Openings since the last answer: each doubles the pause, up to `maxPauseMs`. */
  openCount: number;
  updatedAt: Date;
}

export interface CircuitOptions {
  /** Failures in a row that throttle a destination; as many more open it. 0 switches the breaker off. */
  failures: number;
  /** Attempts in flight per worker to a throttled destination. */
  throttle: number;
  /** The first pause of an open circuit; each further opening doubles it. */
  pauseMs: number;
  /** The longest pause. */
  maxPauseMs: number;
}

export const DEFAULT_CIRCUIT_OPTIONS: CircuitOptions = { failures: 5, throttle: 2, pauseMs: 30_000, maxPauseMs: 600_000 };

export function resolveCircuitOptions(o: Partial<CircuitOptions> = {}): CircuitOptions {
  const r = { ...DEFAULT_CIRCUIT_OPTIONS, ...o };
  const whole = (name: keyof CircuitOptions, min: number) => {
    if (!Number.isInteger(r[name]) || r[name] < min) throw new Error(`delivery circuit ${name} (${r[name]}) must be a whole number of at least ${min}`);
  };
  whole('failures', 0);
  whole('throttle', 1);
  whole('pauseMs', 1);
  whole('maxPauseMs', 1);
  if (r.maxPauseMs < r.pauseMs) throw new Error(`delivery circuit maxPauseMs (${r.maxPauseMs}) must be at least pauseMs (${r.pauseMs})`);
  return r;
}

/** What an attempt's outcome tells the breaker: `failure` (no answer), `success` (any answer) or nothing. */
export function circuitSignal(outcome: SendOutcome | undefined): 'failure' | 'success' | null {
  if (outcome === undefined || outcome.kind === 'cancelled') return null;
  if (outcome.kind === 'delivered' || outcome.statusCode !== null) return 'success';
  // Transient and without a status: timeout, connect, DNS, TLS, reset (private_destination_error
  // too, so a private destination's circuit tells a closed port from a filtered one no better than
  // its attempts do). Permanent ones without a status (the SSRF policy, an unreadable secret) say
  // nothing about the destination's health.
  return outcome.kind === 'transient' ? 'failure' : null;
}

/** A failure of an attempt; `probe` when it was the half-open circuit's one probe. */
export function onFailure(row: CircuitRow | null, now: Date, o: CircuitOptions, probe = false): CircuitRow {
  const r = row ?? { state: 'closed', consecutiveFailures: 0, openedUntil: null, openCount: 0, updatedAt: now };
  switch (r.state) {
    case 'closed': {
      // A count left from long ago (no answer and no failure since) starts again.
      const stale = now.getTime() - r.updatedAt.getTime() > o.maxPauseMs;
      const n = stale ? 1 : r.consecutiveFailures + 1;
      return { ...r, state: n >= o.failures ? 'throttled' : 'closed', consecutiveFailures: n, updatedAt: now };
    }
    case 'throttled': {
      const n = r.consecutiveFailures + 1;
      return n >= 2 * o.failures ? opened(r, n, now, o) : { ...r, consecutiveFailures: n, updatedAt: now };
    }
    case 'open':
      // An attempt that started before the circuit opened: counted, the pause left as it is.
      return { ...r, consecutiveFailures: r.consecutiveFailures + 1, updatedAt: now };
    case 'half_open':
      return probe ? opened(r, r.consecutiveFailures + 1, now, o) : { ...r, consecutiveFailures: r.consecutiveFailures + 1, updatedAt: now };
  }
}

/** The pause of the circuit's `openCount`-th opening since the destination last answered. */
export function pauseMs(openCount: number, o: CircuitOptions): number {
  return Math.min(o.maxPauseMs, o.pauseMs * 2 ** Math.min(30, Math.max(0, openCount - 1)));
}

function opened(r: CircuitRow, failures: number, now: Date, o: CircuitOptions): CircuitRow {
  const openCount = r.openCount + 1;
  return { state: 'open', consecutiveFailures: failures, openedUntil: new Date(now.getTime() + pauseMs(openCount, o)), openCount, updatedAt: now };
}

/** Any answer from the destination closes the circuit: null is the closed circuit with nothing to remember (no row). */
export function onSuccess(): null {
  return null;
}

/** The half-open state: one probe is on its way, until `deadline` (after which another may go). */
export function halfOpen(r: CircuitRow, now: Date, deadline: Date): CircuitRow {
  return { ...r, state: 'half_open', openedUntil: deadline, updatedAt: now };
}

export type Admission = { kind: 'send' } | { kind: 'probe' } | { kind: 'defer'; until: Date };

/**
 * Whether an attempt to the destination may start now, with `inFlight` of this worker's attempts
 * already going there. `probe`: the pause is over (or the last probe's deadline passed): this
 * attempt may be the one probe, if it wins the half-open transition. A throttled destination's
 * attempt beyond `throttle` is put off by `throttledDeferMs`.
 */
export function admission(row: CircuitRow | null, now: Date, inFlight: number, o: CircuitOptions, throttledDeferMs: number): Admission {
  if (row === null) return { kind: 'send' };
  switch (row.state) {
    case 'closed':
      return { kind: 'send' };
    case 'throttled':
      return inFlight < o.throttle ? { kind: 'send' } : { kind: 'defer', until: new Date(now.getTime() + throttledDeferMs) };
    case 'open':
    case 'half_open':
      return row.openedUntil !== null && now < row.openedUntil ? { kind: 'defer', until: row.openedUntil } : { kind: 'probe' };
  }
}

/** The circuit as the webhook resource shows it. */
export interface CircuitView {
  state: CircuitState;
  until: Date | null;
  consecutiveFailures: number;
}

export function circuitView(row: CircuitRow | null): CircuitView {
  if (row === null) return { state: 'closed', until: null, consecutiveFailures: 0 };
  return { state: row.state, until: row.state === 'open' || row.state === 'half_open' ? row.openedUntil : null, consecutiveFailures: row.consecutiveFailures };
}
