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

/** Pacing and failure backoff of one client (all its subreddits). */
export interface LimiterOptions {
  /** Reddit's quota of the client, requests a minute: the pace stays under it, spread evenly. */
  perMinute: number;
  /** The client-wide backoff after a failed request (5xx, network): base · 2^n, capped, equal jitter. */
  backoffBaseMs: number;
  backoffMaxMs: number;
}

/** A request the limiter let through; settle it with its outcome. */
export interface Ticket {
  at: number;
  /** While failing, the one request that tells whether Reddit is back. */
  probe: boolean;
}

/** Requests that may go at once (at most 5 s of the quota). */
const BURST = 5;
/**
 * The pace, as a share of the quota: with the burst on top, any 10 minutes stay within Reddit's
 * window (which it counts in fixed windows, so a pace at 100 % would cross one now and then).
 */
const PACE_SHARE = 0.9;

/**
 * Follows Reddit's `X-Ratelimit-Remaining` / `X-Ratelimit-Reset` (seconds until the window
 * resets): once the budget is spent, no request starts before the reset. Between responses it
 * counts requests it lets through itself, so parallel polls cannot overdraw what the last
 * response said was left. A 429 blocks every request until its Retry-After.
 *
 * It also paces: requests start at most at the quota's rate (90 % of it, a token bucket holding at most 5 requests),
 * so a cold start of many first reads cannot spend a whole window at once and then leave every
 * subreddit waiting for the reset. And it backs off for the whole client: after a failed request
 * no request starts before an exponential, jittered delay, and then only one (the probe) until
 * one answers; a success ends the backoff. So an outage costs one request per backoff step,
 * however many subreddits and polls are waiting, not retries multiplied by polls.
 */
export class RateLimiter {
  /** Requests left in the window; null when unknown (before the first response, after a reset). */
  private remaining: number | null = null;
  private resetAt = 0;
  private blockedUntil = 0;
  private tokens: number;
  private filledAt: number;
  /** Failures in a row (client-wide), and when the last one was counted. */
  private failures = 0;
  private failedAt = -Infinity;
  private backoffUntil = 0;
  private probe: { done: Promise<void>; resolve: () => void } | null = null;
  /** Callers waiting with `urgent` (pages that continue a listing): no other request starts before them. */
  private urgentWaiting = 0;

  constructor(
    private readonly rt: Pick<RedditRuntime, 'now' | 'sleep'>,
    private readonly opts: LimiterOptions = { perMinute: Infinity, backoffBaseMs: 1000, backoffMaxMs: 60_000 },
  ) {
    this.tokens = this.capacity;
    this.filledAt = rt.now();
  }

  private get capacity(): number {
    return Math.max(1, Math.min(BURST, this.opts.perMinute / 12));
  }

  private get pace(): number {
    return this.opts.perMinute * PACE_SHARE;
  }

  /**
   * Waits until a request may start, and counts it. An `urgent` request (the next page of a
   * listing being paged) starts before any other that waits: while a listing is paged, new posts
   * push the page it reads down Reddit's 1,000-item window, so a hot subreddit's paging must not
   * queue behind other subreddits' first pages.
   */
  async acquire(signal?: AbortSignal, urgent = false): Promise<Ticket> {
    if (urgent) this.urgentWaiting++;
    try {
      return await this.take(signal, urgent);
    } finally {
      if (urgent) this.urgentWaiting--;
    }
  }

  private async take(signal: AbortSignal | undefined, urgent: boolean): Promise<Ticket> {
    for (;;) {
      signal?.throwIfAborted();
      if (this.probe) {
        await untilDone(this.probe.done, signal);
        continue;
      }
      const now = this.rt.now();
      let wait = this.waitMs(now);
      // Another caller's next page waits: it takes the next start, this one the one after.
      if (wait <= 0 && !urgent && this.urgentWaiting > 0) wait = Math.max(1, this.tokenMs());
      if (wait <= 0) {
        if (this.remaining !== null && this.remaining < 1) this.remaining = null; // window reset
        if (this.remaining !== null) this.remaining -= 1;
        this.tokens -= 1;
        const probe = this.failures > 0;
        if (probe) {
          let resolve!: () => void;
          const done = new Promise<void>((r) => (resolve = r));
          this.probe = { done, resolve };
        }
        return { at: now, probe };
      }
      await this.rt.sleep(wait, signal);
    }
  }

  /** How long a request starting at `now` would wait (a probe in flight aside). */
  waitMs(now: number): number {
    this.refill(now);
    let until = Math.max(this.blockedUntil, this.backoffUntil);
    if (this.remaining !== null && this.remaining < 1) until = Math.max(until, this.resetAt);
    if (this.tokens < 1 && Number.isFinite(this.opts.perMinute)) until = Math.max(until, now + ((1 - this.tokens) * 60_000) / this.pace);
    return until - now;
  }

  /** The time one request's share of the pace takes (0 without a quota). */
  private tokenMs(): number {
    return Number.isFinite(this.opts.perMinute) ? 60_000 / this.pace : 0;
  }

  /** Reddit answered (whatever the status, 5xx aside): the client-wide backoff ends. */
  succeeded(ticket: Ticket): void {
    this.failures = 0;
    this.backoffUntil = 0;
    this.release(ticket);
  }

  /**
   * A request failed (5xx, timeout, network): the next request waits the backoff. Requests that
   * started before the last failure was counted were in flight with it: they do not count again.
   * Returns the delay.
   */
  failed(ticket: Ticket, random: () => number): number {
    const now = this.rt.now();
    if (ticket.at > this.failedAt || ticket.probe) {
      this.failures++;
      this.failedAt = now;
      this.backoffUntil = now + backoffDelay(this.failures - 1, this.opts.backoffBaseMs, this.opts.backoffMaxMs, random);
    }
    this.release(ticket);
    return Math.max(0, this.backoffUntil - now);
  }

  /** The request ended without telling anything (aborted): a probe lets the next one go. */
  abandoned(ticket: Ticket): void {
    this.release(ticket);
  }

  /** Whether the client is backing off after failures. */
  get failing(): boolean {
    return this.failures > 0;
  }

  private release(ticket: Ticket): void {
    if (!ticket.probe || !this.probe) return;
    const p = this.probe;
    this.probe = null;
    p.resolve();
  }

  private refill(now: number): void {
    if (!Number.isFinite(this.opts.perMinute)) return;
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.filledAt) * this.pace) / 60_000);
    this.filledAt = now;
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

/** Resolves when `done` does, or rejects when `signal` aborts. */
function untilDone(done: Promise<void>, signal?: AbortSignal): Promise<void> {
  if (!signal) return done;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    void done.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
