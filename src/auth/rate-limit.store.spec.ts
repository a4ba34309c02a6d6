import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { RateLimitService } from './rate-limit.service';
import { MemoryRateLimitStore } from './rate-limit.store';
import { RedisRateLimitStore } from './redis-rate-limit.store';

const MIN = 60_000;
const T0 = 1_700_000_020_000; // 40 s into a minute

describe('MemoryRateLimitStore', () => {
  it('counts hits per key inside one fixed minute and reports the window end', async () => {
    const s = new MemoryRateLimitStore();
    expect(await s.hit('a', MIN, T0)).toEqual({ count: 1, resetAt: T0 + 20_000 });
    expect(await s.hit('a', MIN, T0 + 1000)).toEqual({ count: 2, resetAt: T0 + 20_000 });
    expect(await s.hit('b', MIN, T0 + 1000)).toEqual({ count: 1, resetAt: T0 + 20_000 });
  });

  it('starts again at the next window boundary', async () => {
    const s = new MemoryRateLimitStore();
    for (let i = 0; i < 5; i++) await s.hit('a', MIN, T0);
    expect(await s.hit('a', MIN, T0 + 19_999)).toMatchObject({ count: 6 });
    expect(await s.hit('a', MIN, T0 + 20_000)).toEqual({ count: 1, resetAt: T0 + 80_000 });
  });

  it('drops expired windows so memory follows the active keys', async () => {
    const s = new MemoryRateLimitStore();
    for (let i = 0; i < 100; i++) await s.hit(`k${i}`, MIN, T0);
    await s.hit('late', MIN, T0 + 2 * MIN);
    expect((s as unknown as { windows: Map<string, unknown> }).windows.size).toBe(1);
  });
});

/** Enough of an ioredis client for the store: the defined script and the event hooks. */
function fakeClient(impl: (key: string, ttl: number) => Promise<number>) {
  const calls: [string, number][] = [];
  const client = {
    status: 'ready',
    defineCommand: jest.fn(),
    on: jest.fn(),
    trendhooksRateHit: (key: string, ttl: number) => {
      calls.push([key, ttl]);
      return impl(key, ttl);
    },
    quit: jest.fn(async () => 'OK'),
  };
  return { client: client as unknown as Redis, calls, raw: client };
}

describe('RedisRateLimitStore', () => {
  let warn: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => warn.mockRestore());

  it('counts under trendhooks:rl:<key>:<window start> with one atomic script and an expiry past the window', async () => {
    const counts = new Map<string, number>();
    const f = fakeClient(async (k) => {
      counts.set(k, (counts.get(k) ?? 0) + 1);
      return counts.get(k)!;
    });
    const s = new RedisRateLimitStore({ client: f.client });
    expect(f.raw.defineCommand).toHaveBeenCalledWith('trendhooksRateHit', expect.objectContaining({ numberOfKeys: 1, lua: expect.stringMatching(/INCR[\s\S]*PEXPIRE/) }));
    const windowStart = T0 - 40_000;
    expect(await s.hit('key:key_1', MIN, T0)).toEqual({ count: 1, resetAt: windowStart + MIN });
    expect(await s.hit('key:key_1', MIN, T0 + 5000)).toEqual({ count: 2, resetAt: windowStart + MIN });
    expect(await s.hit('key:key_1', MIN, windowStart + MIN)).toEqual({ count: 1, resetAt: windowStart + 2 * MIN });
    expect(f.calls[0][0]).toBe(`trendhooks:rl:key:key_1:${windowStart}`);
    expect(f.calls[2][0]).toBe(`trendhooks:rl:key:key_1:${windowStart + MIN}`);
    // The TTL outlives the window (clock skew between instances), never by much.
    expect(f.calls[0][1]).toBeGreaterThanOrEqual(20_000);
    expect(f.calls[0][1]).toBeLessThanOrEqual(30_000);
  });

  it('honours a key prefix and leaves a client it was given open on shutdown', async () => {
    const f = fakeClient(async () => 1);
    const s = new RedisRateLimitStore({ client: f.client, keyPrefix: 'test:abc:' });
    await s.hit('ip:::1', MIN, T0);
    expect(f.calls[0][0]).toBe(`test:abc:ip:::1:${T0 - 40_000}`);
    await s.onApplicationShutdown();
    expect(f.raw.quit).not.toHaveBeenCalled();
  });

  it('fails open when a command fails: counts in memory and warns once per outage', async () => {
    const f = fakeClient(async () => {
      throw new Error('Command timed out');
    });
    const s = new RedisRateLimitStore({ client: f.client });
    expect(await s.hit('k', MIN, T0)).toEqual({ count: 1, resetAt: T0 + 20_000 });
    expect(await s.hit('k', MIN, T0)).toEqual({ count: 2, resetAt: T0 + 20_000 });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0][0])).toContain('Command timed out');
  });

  it('fails open at once, without waiting, when Redis cannot be reached at all', async () => {
    // Port 1: connection refused.
    const s = new RedisRateLimitStore({ url: 'redis://127.0.0.1:1' });
    try {
      await s.onModuleInit();
      const t0 = Date.now();
      const svc = new RateLimitService(s, { now: () => new Date(T0) });
      for (let i = 1; i <= 3; i++) expect(await svc.consume('key:x', 2)).toMatchObject({ allowed: i <= 2, remaining: Math.max(0, 2 - i) });
      expect(Date.now() - t0).toBeLessThan(250);
      await expect(s.ping()).rejects.toThrow();
      expect(warn).toHaveBeenCalledTimes(1);
    } finally {
      await s.onApplicationShutdown();
    }
  });
});

describe('RateLimitService.headers', () => {
  it('sets the X-RateLimit trio and the IETF RateLimit-Policy / RateLimit fields', () => {
    expect(RateLimitService.headers({ limit: 1200, remaining: 1187, resetSeconds: 42, allowed: true })).toEqual({
      'X-RateLimit-Limit': '1200',
      'X-RateLimit-Remaining': '1187',
      'X-RateLimit-Reset': '42',
      'RateLimit-Policy': '"default";q=1200;w=60',
      RateLimit: '"default";r=1187;t=42',
    });
  });
});
