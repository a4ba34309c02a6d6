/** One fixed one-minute window per key. Stores must be safe to share between requests. */
export interface RateLimitHit {
  count: number;
  /** When the current window ends, epoch ms. */
  resetAt: number;
}

export interface RateLimitStore {
  hit(key: string, windowMs: number, now: number): Promise<RateLimitHit>;
}

export const RATE_LIMIT_STORE = Symbol('trendhooks:rate-limit-store');

/** In-process counters: right for one instance; several instances need a shared store (Redis). */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, RateLimitHit>();
  private lastSweep = 0;

  async hit(key: string, windowMs: number, now: number): Promise<RateLimitHit> {
    if (now - this.lastSweep > windowMs) this.sweep(now);
    const windowStart = now - (now % windowMs);
    let w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      w = { count: 0, resetAt: windowStart + windowMs };
      this.windows.set(key, w);
    }
    w.count++;
    return { ...w };
  }

  // Expired windows are dropped so memory follows the number of active keys, not of all keys ever seen.
  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
  }
}
