import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, Clock } from '../common/clock';
import { AppError } from '../common/errors';
import { RATE_LIMIT_STORE, RateLimitStore } from './rate-limit.store';

export interface RateLimitState {
  limit: number;
  remaining: number;
  resetSeconds: number;
  allowed: boolean;
}

const WINDOW_MS = 60_000;

@Injectable()
export class RateLimitService {
  constructor(
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async consume(key: string, limit: number): Promise<RateLimitState> {
    const now = this.clock.now().getTime();
    const hit = await this.store.hit(key, WINDOW_MS, now);
    return {
      limit,
      remaining: Math.max(0, limit - hit.count),
      resetSeconds: Math.max(1, Math.ceil((hit.resetAt - now) / 1000)),
      allowed: hit.count <= limit,
    };
  }

  /**
   * The de-facto `X-RateLimit-*` trio, and the IETF fields (draft-ietf-httpapi-ratelimit-headers-09,
   * structured-field form) for clients that follow the draft: one policy of `limit` per 60 s window.
   */
  static headers(s: RateLimitState): Record<string, string> {
    return {
      'X-RateLimit-Limit': String(s.limit),
      'X-RateLimit-Remaining': String(s.remaining),
      'X-RateLimit-Reset': String(s.resetSeconds),
      'RateLimit-Policy': `"default";q=${s.limit};w=${WINDOW_MS / 1000}`,
      RateLimit: `"default";r=${s.remaining};t=${s.resetSeconds}`,
    };
  }

  static rejection(s: RateLimitState): AppError {
    return new AppError('RATE_LIMITED', `rate limit of ${s.limit} requests per minute exceeded; retry in ${s.resetSeconds} s`, {
      'Retry-After': String(s.resetSeconds),
    });
  }
}
