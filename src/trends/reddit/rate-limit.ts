/**
 * The Reddit client's timing rules, kept free of I/O so they can be tested with a fake clock:
 * one limiter per client (all subreddits share Reddit's per-client budget), and the retry delays.
 */

/** What a Reddit client needs of time and chance; tests inject a fake clock and instant sleeps. */
export interface RedditRuntime {
  /** Epoch milliseconds. */
  now(): number;
  /** Resolves after `ms`; rejects (AbortError) as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Uniform in [0, 1). */
  random(): number;
}

type HeaderValue = string | string[] | undefined;

function first(v: HeaderValue): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Follows Reddit's `X-Ratelimit-Remaining` / `X-Ratelimit-Reset` (seconds until the window
 * resets): once the budget is spent, no request starts before the reset. Between responses it
 * counts requests it lets through itself, so parallel polls cannot overdraw what the last
 * response said was left. A 429 blocks every request until its Retry-After.
 */
export class RateLimiter {
  /** Requests left in the window; null when unknown (before the first response, after a reset). */
  private remaining: number | null = null;
  private resetAt = 0;
  private blockedUntil = 0;

  constructor(private readonly rt: Pick<RedditRuntime, 'now' | 'sleep'>) {}

  /** Waits until a request may start, and counts it. */
  async acquire(signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const now = this.rt.now();
      const wait = this.waitMs(now);
      if (wait <= 0) {
        if (this.remaining !== null && this.remaining < 1) this.remaining = null; // window reset
        if (this.remaining !== null) this.remaining -= 1;
        return;
      }
      await this.rt.sleep(wait, signal);
    }
  }

  /** How long a request starting at `now` would wait. */
  waitMs(now: number): number {
    let until = this.blockedUntil;
    if (this.remaining !== null && this.remaining < 1) until = Math.max(until, this.resetAt);
    return until - now;
  }

  /** Takes the budget from a response's headers (absent or malformed headers change nothing). */
  update(headers: Record<string, HeaderValue>, now: number, maxWaitMs: number): void {
    const remaining = Number.parseFloat(first(headers['x-ratelimit-remaining']) ?? '');
    const reset = Number.parseFloat(first(headers['x-ratelimit-reset']) ?? '');
    if (!Number.isFinite(remaining) || !Number.isFinite(reset) || reset < 0) return;
    this.remaining = remaining;
    this.resetAt = now + Math.min(reset * 1000, maxWaitMs);
  }

  /** Nothing starts before `until` (a 429's Retry-After applies to the whole client). */
  block(until: number): void {
    this.blockedUntil = Math.max(this.blockedUntil, until);
  }

  /** Seconds until the window resets, from a response (for a 429 without Retry-After). */
  static resetMs(headers: Record<string, HeaderValue>): number | null {
    const reset = Number.parseFloat(first(headers['x-ratelimit-reset']) ?? '');
    return Number.isFinite(reset) && reset >= 0 ? reset * 1000 : null;
  }
}

/**
 * Delay before retry number `retry` (0 for the first): base · 2^retry capped at `max`, half of it
 * fixed and half random ("equal jitter"), so clients that failed together do not retry together
 * yet every retry still waits at least half the nominal delay.
 */
export function backoffDelay(retry: number, baseMs: number, maxMs: number, random: () => number): number {
  const nominal = Math.min(maxMs, baseMs * 2 ** retry);
  return nominal / 2 + random() * (nominal / 2);
}
