import * as path from 'node:path';
import { ConfigError, loadConfig, parseDatabaseUrl, parsePlanRateLimits } from './config';

/** loadConfig is the only reader of the environment: defaults, and a clear ConfigError for every bad value. */
describe('loadConfig', () => {
  const bad = (env: Record<string, string>, message: RegExp) => {
    let err: unknown;
    try {
      loadConfig(env, '/srv');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(message);
  };

  it('defaults to the embedded SQLite file, express on 127.0.0.1:8080 and the documented delivery settings', () => {
    const c = loadConfig({}, '/srv');
    expect(c.database).toEqual({ type: 'sqlite', path: path.resolve('/srv', 'data/trendhooks.db') });
    expect(c.http).toEqual({ port: 8080, host: '127.0.0.1', adapter: 'express' });
    expect(c.delivery).toMatchObject({ concurrency: 64, batchSize: 64, timeoutMs: 10_000, leaseMs: 60_000 });
    expect(c.trends).toMatchObject({ redditBaseUrl: 'https://www.reddit.com', redditClientId: null, redditUserAgent: null, trackedSubreddits: [] });
    expect(c.redisUrl).toBeNull();
  });

  it('reads what is set, trimming blanks and normalising subreddit names', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgres://u@db:5432/th',
      PORT: '0',
      HTTP_ADAPTER: 'Fastify',
      DELIVERY_CONCURRENCY: ' 128 ',
      TRACKED_SUBREDDITS: 'r/Node, /r/typescript ,,rust',
      REDDIT_USER_AGENT: 'linux:com.example.trends:1.0 (by /u/example)',
      REDIS_URL: 'redis://127.0.0.1:6379',
      PLAN_RATE_LIMITS: 'free=10,business=9000',
    });
    expect(c.database).toEqual({ type: 'postgres', url: 'postgres://u@db:5432/th' });
    expect(c.http).toMatchObject({ port: 0, adapter: 'fastify' });
    expect(c.delivery.concurrency).toBe(128);
    expect(c.trends.trackedSubreddits).toEqual(['node', 'typescript', 'rust']);
    expect(c.trends.redditUserAgent).toBe('linux:com.example.trends:1.0 (by /u/example)');
    expect(c.plans.free.requestsPerMinute).toBe(10);
    expect(c.plans.business.requestsPerMinute).toBe(9000);
  });

  it.each([
    [{ PORT: '80a' }, /PORT must be an integer/],
    [{ PORT: '70000' }, /PORT must be between 0 and 65535/],
    [{ DELIVERY_TIMEOUT_MS: '-1' }, /^DELIVERY_TIMEOUT_MS must be between 100 and 120000, got -1$/],
    [{ DELIVERY_CONCURRENCY: '0' }, /DELIVERY_CONCURRENCY must be between 1 and 1024/],
    [{ DELIVERY_TIMEOUT_MS: '10000', DELIVERY_LEASE_MS: '15000' }, /DELIVERY_LEASE_MS \(15000\) must exceed/],
    [{ HTTP_ADAPTER: 'koa' }, /HTTP_ADAPTER must be express or fastify/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must start with/],
    [{ REDIS_URL: 'http://x' }, /REDIS_URL must start with/],
    [{ TRACKED_SUBREDDITS: 'node,no spaces' }, /TRACKED_SUBREDDITS: "no spaces" is not a subreddit name/],
    [{ REDDIT_CLIENT_ID: 'only-the-id' }, /go together/],
    [{ REDDIT_BASE_URL: 'https://www.reddit.com/r/x' }, /REDDIT_BASE_URL must be an http\(s\) origin/],
    [{ REDDIT_USER_AGENT: 'bad\u0007agent' }, /REDDIT_USER_AGENT must be 1 to 256 printable ASCII/],
    [{ REDDIT_USER_AGENT: 'x'.repeat(257) }, /REDDIT_USER_AGENT/],
    [{ PLAN_RATE_LIMITS: 'gold=5' }, /PLAN_RATE_LIMITS: bad entry "gold=5"/],
    [{ SSRF_ALLOW_CIDRS: '10.0.0.0/33' }, /^SSRF_ALLOW_CIDRS: /],
    [{ CURSOR_SECRET: 'change-me-to-a-long-random-secret-of-32+-chars' }, /^CURSOR_SECRET: CURSOR_SECRET entry #1 is a placeholder/],
    [{ CURSOR_SECRET: 'x'.repeat(40) }, /^CURSOR_SECRET: CURSOR_SECRET entry #1 is a placeholder/],
    [{ SSRF_ALLOW_DESTINATIONS: 'localhost:9443' }, /^SSRF_ALLOW_DESTINATIONS: "localhost:9443" is not an IP:port destination/],
    [{ SSRF_ALLOW_DESTINATIONS: '127.0.0.1' }, /^SSRF_ALLOW_DESTINATIONS: "127.0.0.1" is not an IP:port destination/],
    [{ SSRF_ALLOW_DESTINATIONS: '127.0.0.1:0' }, /^SSRF_ALLOW_DESTINATIONS: "127.0.0.1:0": the port must be from 1 to 65535/],
  ])('refuses %j', (env, message) => bad(env as Record<string, string>, message));
});

describe('parseDatabaseUrl', () => {
  it('accepts postgres://, postgresql://, sqlite: with relative, absolute and triple-slash paths, and :memory:', () => {
    expect(parseDatabaseUrl('postgresql://h/db', '/srv')).toEqual({ type: 'postgres', url: 'postgresql://h/db' });
    expect(parseDatabaseUrl('sqlite:data/x.db', '/srv')).toEqual({ type: 'sqlite', path: '/srv/data/x.db' });
    expect(parseDatabaseUrl('sqlite:/abs/x.db', '/srv')).toEqual({ type: 'sqlite', path: '/abs/x.db' });
    expect(parseDatabaseUrl('sqlite:///abs/x.db', '/srv')).toEqual({ type: 'sqlite', path: '/abs/x.db' });
    expect(parseDatabaseUrl('sqlite::memory:', '/srv')).toEqual({ type: 'sqlite', path: ':memory:' });
  });
});

describe('parsePlanRateLimits', () => {
  it('reads plan=requests_per_minute pairs and refuses zero', () => {
    expect(parsePlanRateLimits(' free = 1 , pro=2')).toEqual({ free: 1, pro: 2 });
    expect(() => parsePlanRateLimits('free=0')).toThrow(ConfigError);
    expect(parsePlanRateLimits(null)).toEqual({});
  });
});
