import { randomBytes } from 'node:crypto';
import { getDataSourceToken } from '@nestjs/typeorm';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { RedisRateLimitStore } from '../src/auth/redis-rate-limit.store';
import { existingDatabase, testDatabases } from './support/databases';
import { startTestApp, TestApp } from './support/app';
import { redisAvailable, TEST_REDIS_URL } from './support/redis';
import { sleep } from './support/receiver';

const MIN = 60_000;

/** A fixed window must not roll over mid-test: wait for a fresh one when fewer than `needMs` are left. */
async function awayFromWindowEdge(needMs = 8000): Promise<void> {
  const left = MIN - (Date.now() % MIN);
  if (left < needMs) await sleep(left + 50);
}

// Without Redis (and outside CI) global-setup has warned loudly; under CI=true it failed the run instead.
const describeRedis = redisAvailable() ? describe : describe.skip;

describeRedis('RedisRateLimitStore against the real Redis', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(() => redis.quit());

  it('counts concurrent hits atomically and gives the window key an expiry just past the window', async () => {
    const prefix = `trendhooks:test:${randomBytes(6).toString('hex')}:`;
    const store = new RedisRateLimitStore({ url: TEST_REDIS_URL, keyPrefix: prefix });
    try {
      await store.onModuleInit();
      const now = Date.now();
      const hits = await Promise.all(Array.from({ length: 50 }, () => store.hit('key:k1', MIN, now)));
      expect(hits.map((h) => h.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      const windowStart = now - (now % MIN);
      expect(new Set(hits.map((h) => h.resetAt))).toEqual(new Set([windowStart + MIN]));
      const key = `${prefix}key:k1:${windowStart}`;
      expect(await redis.get(key)).toBe('50');
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(windowStart + MIN - now + 5000);
      await store.ping();
    } finally {
      await store.onApplicationShutdown();
    }
  });
});

describeRedis.each(testDatabases())('one rate limit shared by two instances through Redis on %s', (_name, makeDb) => {
  let a: TestApp;
  let b: TestApp;
  const env = { REDIS_URL: TEST_REDIS_URL, PLAN_RATE_LIMITS: 'business=5' };

  beforeAll(async () => {
    a = await startTestApp(makeDb(), { env });
    // The second instance on the same database (no second create / drop).
    b = await startTestApp(existingDatabase(a.config.database), { env });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('counts 3 requests to A and 3 to B against one budget of 5: the 6th is 429', async () => {
    await awayFromWindowEdge();
    const c = await a.customer(); // a fresh key, so reruns never share a counter
    const statuses: number[] = [];
    const remaining: string[] = [];
    for (const [i, app] of [a, a, a, b, b, b].entries()) {
      const res = await app.http().get('/v1/webhooks').set(c.auth);
      statuses.push(res.status);
      remaining.push(res.headers['x-ratelimit-remaining']);
      expect(res.headers['x-ratelimit-limit']).toBe('5');
      expect(res.headers['ratelimit-policy']).toBe('"default";q=5;w=60');
      const reset = Number(res.headers['x-ratelimit-reset']);
      expect(res.headers.ratelimit).toBe(`"default";r=${Math.max(0, 4 - i)};t=${reset}`);
      expect(reset).toBeGreaterThan(0);
      expect(reset).toBeLessThanOrEqual(60);
      if (res.status === 429) {
        expect(res.body.error.code).toBe('RATE_LIMITED');
        expect(res.headers['retry-after']).toBe(String(reset));
      }
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(remaining).toEqual(['4', '3', '2', '1', '0', '0']);

    // The counter is the one Redis key of this API key's current window.
    const [{ id }] = await a.app.get<DataSource>(getDataSourceToken()).query(
      a.config.database.type === 'postgres' ? 'SELECT id FROM api_keys WHERE customer_id = $1' : 'SELECT id FROM api_keys WHERE customer_id = ?',
      [c.customerId],
    );
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const keys = await redis.keys(`trendhooks:rl:key:${id}:*`);
      expect(keys).toHaveLength(1);
      expect(await redis.get(keys[0])).toBe('6');
    } finally {
      await redis.quit();
    }
  });

  it('reports Redis in readiness', async () => {
    const res = await b.http().get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', checks: { database: 'up', redis: 'up' } });
  });
});

describeRedis.each(testDatabases())('portal link exchanges counted once across two instances through Redis on %s', (_name, makeDb) => {
  let a: TestApp;
  let b: TestApp;
  const env = { REDIS_URL: TEST_REDIS_URL, PORTAL_EXCHANGES_PER_MINUTE: '3' };

  beforeAll(async () => {
    a = await startTestApp(makeDb(), { env });
    b = await startTestApp(existingDatabase(a.config.database), { env });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('2 refused exchanges on A and 1 on B use up the 3 a minute: the next refused one, on B, is 429; a valid token still goes through', async () => {
    await awayFromWindowEdge();
    const redis = new Redis(TEST_REDIS_URL);
    try {
      // The count is per client address (127.0.0.1 here): start this window's from zero.
      const stale = await redis.keys('trendhooks:rl:portal-exchange:*');
      if (stale.length > 0) await redis.del(...stale);
      const c = await a.customer();
      const minted = await a.http().post('/v1/portal/sessions').set(c.auth).send({}).expect(201);
      const token = new URL(minted.body.data.url).hash.replace(/^#token=/, '');
      const portal = { 'X-Trendhooks-Portal': '1' };
      const statuses: number[] = [];
      for (const app of [a, a, b]) statuses.push((await app.http().post('/portal/session').set(portal).send({ token: `thpl_${'x'.repeat(42)}` })).status);
      expect(statuses).toEqual([401, 401, 401]);
      const refused = await b.http().post('/portal/session').set(portal).send({ token: 'garbage' });
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('RATE_LIMITED');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      const keys = await redis.keys('trendhooks:rl:portal-exchange:ip:*');
      expect(keys).toHaveLength(1);
      expect(await redis.get(keys[0])).toBe('4');
      // A well-formed token has a budget of its own, shared by the instances too.
      await b.http().post('/portal/session').set(portal).send({ token }).expect(200);
      expect(await redis.keys('trendhooks:rl:portal-exchange:well-formed:*')).toHaveLength(1);
    } finally {
      await redis.quit();
    }
  });
});
