/** Delays (seconds) before attempts 2..8; 8 attempts spread over ~27.6 h nominal. */
export const DEFAULT_RETRY_SCHEDULE_S: readonly number[] = Object.freeze([
  5, 300, 1800, 7200, 18000, 36000, 36000,
]);
export const DEFAULT_JITTER = 0.2;
export const DEFAULT_MAX_RETRY_AFTER_MS = 3_600_000;

// Plain decimals only: "1e3", "0x10", "Infinity" or " " are typos in a schedule, not delays.
const DECIMAL_RE = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

/**
 * Parses an operator schedule such as `0.05,0.1,0.2` (seconds between attempts; its length + 1
 * is the number of attempts). Throws an Error naming the bad entry, so a typo stops startup
 * instead of silently changing the retry behaviour.
 */
export function parseRetrySchedule(text: string): number[] {
  if (typeof text !== 'string' || text.trim() === '') {
    throw new Error('Retry schedule is empty: expected a comma-separated list of seconds, e.g. "5,300,1800"');
  }
  return text.split(',').map((raw, index) => {
    const entry = raw.trim();
    const seconds = Number(entry);
    if (!DECIMAL_RE.test(entry) || !Number.isFinite(seconds) || seconds <= 0) {
      throw new Error(
        `Retry schedule entry ${index + 1} (${JSON.stringify(raw)}) must be a positive number of seconds, e.g. "5" or "0.05"`,
      );
    }
    return seconds;
  });
}

export interface RetryPolicyOptions {
  /** Seconds to wait before attempt 2, 3, …; its length + 1 is the number of attempts. */
  scheduleSeconds: readonly number[];
  /** Relative jitter: each delay lands in [1 - jitter, 1 + jitter] × nominal. Default 0.2. */
  jitter?: number;
  /** Cap on a receiver's Retry-After, so one header cannot park a delivery for days. Default 1 h. */
  maxRetryAfterMs?: number;
  /** Uniform in [0, 1); injectable so tests can pin the jitter. */
  random?: () => number;
}

export class RetryPolicy {
  private readonly scheduleMs: readonly number[];
  private readonly jitter: number;
  private readonly maxRetryAfterMs: number;
  private readonly random: () => number;

  constructor(opts: RetryPolicyOptions) {
    const { scheduleSeconds, jitter = DEFAULT_JITTER, maxRetryAfterMs = DEFAULT_MAX_RETRY_AFTER_MS } = opts;
    if (!Array.isArray(scheduleSeconds) || scheduleSeconds.some((s) => !Number.isFinite(s) || s <= 0)) {
      throw new Error('RetryPolicy scheduleSeconds must be positive finite numbers');
    }
    // jitter < 1 keeps every delay strictly positive.
    if (!Number.isFinite(jitter) || jitter < 0 || jitter >= 1) {
      throw new Error('RetryPolicy jitter must be in [0, 1)');
    }
    if (!Number.isFinite(maxRetryAfterMs) || maxRetryAfterMs < 0) {
      throw new Error('RetryPolicy maxRetryAfterMs must be a non-negative finite number');
    }
    this.scheduleMs = scheduleSeconds.map((s) => s * 1000);
    this.jitter = jitter;
    this.maxRetryAfterMs = maxRetryAfterMs;
    this.random = opts.random ?? Math.random;
  }

  /** First try + one per schedule entry (8 with the default schedule). */
  get maxAttempts(): number {
    return this.scheduleMs.length + 1;
  }

  /**
   * Wait in ms before the next attempt, given how many attempts were already made (≥ 1,
   * counting the one that just failed); null when none are left.
   *
   * Receiver-friendly rule: delay = max(jittered schedule, min(Retry-After, maxRetryAfterMs)).
   * Retry-After can only lengthen a wait (we never hammer a receiver sooner than planned) and is
   * capped so a huge value cannot stall a delivery beyond the schedule's reach.
   */
  nextDelayMs(attemptsMade: number, retryAfterMs: number | null): number | null {
    if (!Number.isInteger(attemptsMade) || attemptsMade < 1) {
      throw new Error('attemptsMade must be an integer ≥ 1');
    }
    if (attemptsMade >= this.maxAttempts) return null;
    const nominal = this.scheduleMs[attemptsMade - 1];
    const delay = this.jittered(nominal);
    if (retryAfterMs === null || !Number.isFinite(retryAfterMs) || retryAfterMs < 0) return delay;
    return Math.max(delay, Math.round(Math.min(retryAfterMs, this.maxRetryAfterMs)));
  }

  private jittered(nominal: number): number {
    // Clamp random() defensively: a stub returning 1 or NaN must not break the ±jitter bound.
    const raw = this.random();
    const r = Number.isFinite(raw) ? Math.min(Math.max(raw, 0), 1) : 0.5;
    const lo = nominal * (1 - this.jitter);
    const hi = nominal * (1 + this.jitter);
    const exact = lo + (hi - lo) * r;
    // Whole ms, but never outside [lo, hi]; a sub-ms window (tiny test schedules) stays exact.
    const minInt = Math.ceil(lo);
    const maxInt = Math.floor(hi);
    if (minInt > maxInt) return exact;
    return Math.min(Math.max(Math.round(exact), minInt), maxInt);
  }
}
