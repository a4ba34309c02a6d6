import { Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type Redis from 'ioredis';
import { MemoryRateLimitStore, RateLimitHit, RateLimitStore } from './rate-limit.store';
import { requireOptional } from '../common/optional-package';

export const REDIS_RATE_LIMIT_PREFIX = 'trendhooks:rl:';

// INCR and PEXPIRE in one script, so a counter can never be left without its expiry.
const HIT_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

/** Kept a little past the window's end: the key names its window, so the TTL only reclaims memory, and the slack covers clock skew between instances. */
const EXPIRY_SLACK_MS = 5000;

export interface RedisRateLimitStoreOptions {
  /** `redis://…` or `rediss://…` (REDIS_URL). */
  url?: string;
  /**
   * An existing ioredis client instead of `url`; the caller keeps ownership (it is not closed on
   * shutdown). Typed `object`: ioredis is an optional peer, which the published types must not need.
   */
  client?: object;
  /** Key prefix; tests use their own so reruns never collide. Default `trendhooks:rl:`. */
  keyPrefix?: string;
  /** The longest a request waits on Redis before it is counted locally instead. Default 500 ms. */
  commandTimeoutMs?: number;
}

type HitClient = Redis & { trendhooksRateHit(key: string, ttlMs: number): Promise<number> };

/**
 * Fixed one-minute windows shared by every instance through Redis: key
 * `trendhooks:rl:<key>:<window start ms>`, counted by one atomic script.
 *
 * When Redis is unreachable the store fails open: requests are not refused or delayed because of
 * Redis, and are counted in this process's memory until Redis answers again (each instance then
 * enforces the limit on its own, so the effective limit is at most instances × limit). A warning
 * is logged once per outage.
 */
export class RedisRateLimitStore implements RateLimitStore, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  private readonly client: HitClient;
  private readonly ownsClient: boolean;
  private readonly prefix: string;
  private readonly fallback = new MemoryRateLimitStore();
  private degraded = false;
  private closed = false;

  constructor(options: RedisRateLimitStoreOptions) {
    if (!options.client && !options.url) throw new Error('RedisRateLimitStore needs a url or a client');
    this.prefix = options.keyPrefix ?? REDIS_RATE_LIMIT_PREFIX;
    this.ownsClient = !options.client;
    // Required here, not imported: the package's root entry exports this class, and a process without REDIS_URL never loads ioredis (nor needs it installed).
    const RedisClient = options.client ? undefined : requireOptional<typeof import('ioredis')>('ioredis', 'REDIS_URL is set').default;
    const client =
      (options.client as Redis | undefined) ??
      new RedisClient!(options.url!, {
        lazyConnect: true,
        // A request must never queue behind a reconnect: without a connection commands fail at once.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        commandTimeout: options.commandTimeoutMs ?? 500,
        connectTimeout: 2000,
        retryStrategy: (times) => Math.min(times * 200, 5000),
      });
    client.defineCommand('trendhooksRateHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    // Without a listener ioredis prints every reconnect failure; one warning per outage is enough.
    client.on('error', (err: Error) => this.degrade(err));
    client.on('ready', () => this.recovered());
    this.client = client as HitClient;
  }

  async hit(key: string, windowMs: number, now: number): Promise<RateLimitHit> {
    const windowStart = now - (now % windowMs);
    const resetAt = windowStart + windowMs;
    try {
      const count = await this.client.trendhooksRateHit(`${this.prefix}${key}:${windowStart}`, resetAt - now + EXPIRY_SLACK_MS);
      return { count: Number(count), resetAt };
    } catch (err) {
      this.degrade(err as Error);
      return this.fallback.hit(key, windowMs, now);
    }
  }

  /** For readiness: rejects unless Redis answers now. */
  async ping(): Promise<void> {
    await this.client.ping();
  }

  /** Connects at start so the first requests are already shared; a failure only degrades (see the class comment). */
  async onModuleInit(): Promise<void> {
    if (this.client.status === 'wait') await this.client.connect().catch((err: Error) => this.degrade(err));
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.closed || !this.ownsClient) return;
    this.closed = true;
    // quit() needs a connection; while Redis is down, disconnect() stops the reconnect loop instead.
    await this.client.quit().catch(() => this.client.disconnect());
  }

  private degrade(err: Error): void {
    if (this.degraded || this.closed) return;
    this.degraded = true;
    this.logger.warn(`Redis is unavailable (${err.message}): rate limits are counted per instance until it is back`);
  }

  private recovered(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.logger.log('Redis is back: rate limits are shared again');
  }
}
