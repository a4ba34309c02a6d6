import * as path from 'node:path';
import { UnsupportedDatabaseError } from '../database/dialect';
import { ConfigError, describeDatabase, encryptionKeyFile, loadConfig, parseDatabaseUrl, parsePlanRateLimits } from './config';

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

  it('reads the HTTP slow-client limits, and refuses a headers deadline past the request deadline', () => {
    const c = loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '2000', HTTP_REQUEST_TIMEOUT_MS: '4000', HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000', HTTP_MAX_CONNECTIONS: '10' });
    expect(c.http.limits).toEqual({ headersTimeoutMs: 2000, requestTimeoutMs: 4000, keepAliveTimeoutMs: 1000, maxConnections: 10 });
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '4000' })).toThrow(/HTTP_HEADERS_TIMEOUT_MS \(5000\) must not exceed HTTP_REQUEST_TIMEOUT_MS \(4000\)/);
    expect(() => loadConfig({ HTTP_MAX_CONNECTIONS: '0' })).toThrow(/HTTP_MAX_CONNECTIONS must be between 1 and/);
  });

  it('reads TRUST_PROXY: nobody by default, a count of proxies or named addresses, never "any peer"', () => {
    const env = { CURSOR_SECRET: 'unit-cursor-secret-0123456789abcdefghijklmnop' };
    expect(loadConfig(env).http.trustProxy).toBeNull();
    expect(loadConfig({ ...env, TRUST_PROXY: 'false' }).http.trustProxy).toBeNull();
    expect(loadConfig({ ...env, TRUST_PROXY: '1' }).http.trustProxy).toBe(1);
    expect(loadConfig({ ...env, TRUST_PROXY: 'loopback, 10.0.0.0/8 ::1' }).http.trustProxy).toEqual(['loopback', '10.0.0.0/8', '::1']);
    for (const bad of ['true', '0', '11', '10.0.0.0/33', 'proxy.example', '*']) expect(() => loadConfig({ ...env, TRUST_PROXY: bad })).toThrow(/TRUST_PROXY/);
  });

  it('defaults to the embedded SQLite file, express on 127.0.0.1:8080 and the documented delivery settings', () => {
    const c = loadConfig({}, '/srv');
    expect(c.database).toEqual({ type: 'sqlite', path: path.resolve('/srv', 'data/trendhooks.db') });
    expect(c.http).toEqual({ port: 8080, host: '127.0.0.1', adapter: 'express', limits: { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5000, maxConnections: 1024 }, trustProxy: null });
    expect(c.metrics).toEqual({ port: null, host: '127.0.0.1' });
    expect(c.delivery).toMatchObject({ concurrency: 64, batchSize: 64, timeoutMs: 10_000, leaseMs: 3000, dnsLookupsPerCustomer: null });
    expect(c.trends).toMatchObject({ redditBaseUrl: 'https://www.reddit.com', redditClientId: null, redditUserAgent: null, trackedSubreddits: [] });
    expect(c.redisUrl).toBeNull();
    expect(c.ssrf).toEqual({
      allowCidrs: '',
      allowDestinations: '',
      denyCidrs: '',
      dnsTimeoutMs: 5000,
      dnsServers: null,
      dnsCacheTtlMs: 60_000,
      dnsNegativeTtlMs: 5000,
      dnsCacheMaxEntries: 10_000,
      dnsMaxConcurrentPerCustomer: 8,
    });
  });

  it("reads a host database's migrations table and features, and refuses what would mix the two series", () => {
    expect(loadConfig({}, '/srv').hostSchema).toBeNull();
    expect(loadConfig({ TRENDHOOKS_MIGRATIONS_TABLE: 'host_migrations' }, '/srv').hostSchema).toEqual({
      migrationsTable: 'host_migrations',
      features: { apiKeys: true, settings: true, posts: true },
    });
    expect(loadConfig({ TRENDHOOKS_MIGRATIONS_TABLE: 'host_migrations', TRENDHOOKS_FEATURES: 'core,posts' }, '/srv').hostSchema?.features).toEqual({ apiKeys: false, settings: false, posts: true });
    bad({ TRENDHOOKS_FEATURES: 'core' }, /set TRENDHOOKS_MIGRATIONS_TABLE \(--migrations-table\) too/);
    bad({ TRENDHOOKS_MIGRATIONS_TABLE: 'trendhooks_migrations' }, /trendhooks_migrations is the standalone's/);
    bad({ TRENDHOOKS_MIGRATIONS_TABLE: 'a"b' }, /must be a table name/);
    bad({ TRENDHOOKS_MIGRATIONS_TABLE: 'm', TRENDHOOKS_FEATURES: 'core,nope' }, /TRENDHOOKS_FEATURES: unknown feature "nope"/);
  });

  it('reads WEBHOOK_DISABLE_AFTER as a duration (5 days by default, off for never), and refuses bad values', () => {
    expect(loadConfig({}).delivery.disableAfterMs).toBe(5 * 86_400_000);
    expect(loadConfig({ WEBHOOK_DISABLE_AFTER: '36h' }).delivery.disableAfterMs).toBe(36 * 3_600_000);
    expect(loadConfig({ WEBHOOK_DISABLE_AFTER: '1.5d' }).delivery.disableAfterMs).toBe(36 * 3_600_000);
    expect(loadConfig({ WEBHOOK_DISABLE_AFTER: '90000' }).delivery.disableAfterMs).toBe(90_000);
    expect(loadConfig({ WEBHOOK_DISABLE_AFTER: 'off' }).delivery.disableAfterMs).toBeNull();
    expect(loadConfig({ WEBHOOK_DISABLE_AFTER: '0' }).delivery.disableAfterMs).toBeNull();
    bad({ WEBHOOK_DISABLE_AFTER: 'five days' }, /WEBHOOK_DISABLE_AFTER: must be a duration/);
    bad({ WEBHOOK_DISABLE_AFTER: '-5d' }, /WEBHOOK_DISABLE_AFTER: must be a duration/);
    bad({ WEBHOOK_DISABLE_AFTER: '500ms' }, /WEBHOOK_DISABLE_AFTER: must be between/);
    bad({ WEBHOOK_DISABLE_AFTER: '400d' }, /WEBHOOK_DISABLE_AFTER: must be between/);
  });

  it('reads the operators\' webhook, URL and signing secret together, never echoing the secret', () => {
    const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig({}).operations).toBeNull();
    expect(loadConfig({ OPERATIONS_WEBHOOK_URL: 'https://ops.example.com/hook', OPERATIONS_WEBHOOK_SECRET: secret }).operations).toEqual({ webhookUrl: 'https://ops.example.com/hook', webhookSecret: secret });
    bad({ OPERATIONS_WEBHOOK_URL: 'https://ops.example.com/hook' }, /go together/);
    bad({ OPERATIONS_WEBHOOK_SECRET: secret }, /go together/);
    bad({ OPERATIONS_WEBHOOK_URL: 'ftp://ops.example.com/', OPERATIONS_WEBHOOK_SECRET: secret }, /must be an absolute http\(s\) URL/);
    let err: Error | undefined;
    try {
      loadConfig({ OPERATIONS_WEBHOOK_URL: 'https://ops.example.com/', OPERATIONS_WEBHOOK_SECRET: 'not-a-secret-value' });
    } catch (e) {
      err = e as Error;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.message).toMatch(/^OPERATIONS_WEBHOOK_SECRET: /);
    expect(err!.message).not.toContain('not-a-secret-value');
  });

  it('reads the SSRF resolver settings', () => {
    const c = loadConfig({
      SSRF_DNS_SERVERS: '127.0.0.1:5353, [::1]:53 10.0.0.2',
      SSRF_DNS_TIMEOUT_MS: '1500',
      SSRF_DNS_CACHE_TTL_MS: '0',
      SSRF_DNS_NEGATIVE_TTL_MS: '0',
      SSRF_DNS_CACHE_MAX_ENTRIES: '50',
      SSRF_DNS_MAX_CONCURRENT_PER_CUSTOMER: '2',
    });
    expect(c.ssrf).toMatchObject({
      dnsServers: ['127.0.0.1:5353', '[::1]:53', '10.0.0.2'],
      dnsTimeoutMs: 1500,
      dnsCacheTtlMs: 0,
      dnsNegativeTtlMs: 0,
      dnsCacheMaxEntries: 50,
      dnsMaxConcurrentPerCustomer: 2,
    });
  });

  it('reads what is set, trimming blanks and normalising subreddit names', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgres://u@db:5432/th',
      PORT: '0',
      METRICS_PORT: '9464',
      METRICS_HOST: '::1',
      HTTP_ADAPTER: 'Fastify',
      DELIVERY_CONCURRENCY: ' 128 ',
      DELIVERY_DNS_LOOKUPS_PER_CUSTOMER: '128',
      TRACKED_SUBREDDITS: 'r/Node, /r/typescript ,,rust',
      REDDIT_USER_AGENT: 'linux:com.example.trends:1.0 (by /u/example)',
      REDIS_URL: 'redis://127.0.0.1:6379',
      PLAN_RATE_LIMITS: 'free=10,business=9000',
    });
    expect(c.database).toEqual({ type: 'postgres', url: 'postgres://u@db:5432/th' });
    expect(c.http).toMatchObject({ port: 0, adapter: 'fastify' });
    expect(c.metrics).toEqual({ port: 9464, host: '::1' });
    expect(c.delivery).toMatchObject({ concurrency: 128, dnsLookupsPerCustomer: 128 });
    expect(c.delivery.circuit).toEqual({ failures: 5, throttle: 2, pauseMs: 30_000, maxPauseMs: 600_000 });
    expect(c.trends.trackedSubreddits).toEqual(['node', 'typescript', 'rust']);
    expect(c.trends.redditUserAgent).toBe('linux:com.example.trends:1.0 (by /u/example)');
    expect(c.plans.free.requestsPerMinute).toBe(10);
    expect(c.plans.business.requestsPerMinute).toBe(9000);
  });

  it.each([
    [{ PORT: '80a' }, /PORT must be an integer/],
    [{ PORT: '70000' }, /PORT must be between 0 and 65535/],
    [{ METRICS_PORT: 'nine' }, /METRICS_PORT must be an integer/],
    [{ METRICS_PORT: '65536' }, /METRICS_PORT must be between 0 and 65535/],
    [{ METRICS_PORT: '-1' }, /METRICS_PORT must be between 0 and 65535, got -1/],
    [{ PORT: '9000', METRICS_PORT: '9000' }, /METRICS_PORT \(9000\) must differ from PORT/],
    [{ METRICS_HOST: '0.0.0.0' }, /METRICS_HOST is set but METRICS_PORT is not/],
    [{ DELIVERY_TIMEOUT_MS: '-1' }, /^DELIVERY_TIMEOUT_MS must be between 100 and 120000, got -1$/],
    [{ DELIVERY_CONCURRENCY: '0' }, /DELIVERY_CONCURRENCY must be between 1 and 1024/],
    [{ DELIVERY_DNS_LOOKUPS_PER_CUSTOMER: '0' }, /^DELIVERY_DNS_LOOKUPS_PER_CUSTOMER must be between 1 and 64, got 0$/],
    [{ DELIVERY_CONCURRENCY: '16', DELIVERY_DNS_LOOKUPS_PER_CUSTOMER: '17' }, /^DELIVERY_DNS_LOOKUPS_PER_CUSTOMER must be between 1 and 16, got 17$/],
    [{ DELIVERY_DNS_LOOKUPS_PER_CUSTOMER: 'lots' }, /DELIVERY_DNS_LOOKUPS_PER_CUSTOMER must be an integer/],
    [{ DELIVERY_LEASE_MS: '999' }, /DELIVERY_LEASE_MS must be between 1000 and 3600000, got 999/],
    [{ DELIVERY_CIRCUIT_FAILURES: '-1' }, /DELIVERY_CIRCUIT_FAILURES must be between 0 and 1000, got -1/],
    [{ DELIVERY_CIRCUIT_THROTTLE: '0' }, /DELIVERY_CIRCUIT_THROTTLE must be between 1 and 1024, got 0/],
    [{ DELIVERY_CIRCUIT_PAUSE_MS: '60000', DELIVERY_CIRCUIT_MAX_PAUSE_MS: '30000' }, /DELIVERY_CIRCUIT_MAX_PAUSE_MS \(30000\) must be at least DELIVERY_CIRCUIT_PAUSE_MS \(60000\)/],
    [{ HTTP_ADAPTER: 'koa' }, /HTTP_ADAPTER must be express or fastify/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must start with/],
    [{ REDIS_URL: 'http://x' }, /REDIS_URL must start with/],
    [{ TRACKED_SUBREDDITS: 'node,no spaces' }, /TRACKED_SUBREDDITS: "no spaces" is not a subreddit name/],
    [{ REDDIT_CLIENT_ID: 'only-the-id' }, /go together/],
    [{ REDDIT_POLLING: 'no' }, /REDDIT_POLLING must be "on" or "off", got "no"/],
    [{ POSTS_RETENTION_DAYS: '0' }, /POSTS_RETENTION_DAYS must be between 1 and 3650, got 0/],
    [{ POSTS_RETENTION_DAYS: 'a month' }, /POSTS_RETENTION_DAYS must be an integer/],
    [{ REDDIT_CLIENTS: 'abc' }, /^REDDIT_CLIENTS entry 1 \("abc"\) must be client_id:client_secret$/],
    [{ REDDIT_CLIENTS: 'abc:s1,,def:s2' }, /^REDDIT_CLIENTS entry 2 is empty/],
    [{ REDDIT_CLIENTS: 'abc:' }, /^REDDIT_CLIENTS entry 1 \("abc"\) must be client_id:client_secret$/],
    [{ REDDIT_CLIENTS: 'abc:s1,abc:s2' }, /^REDDIT_CLIENTS entry 2 \("abc"\): client id "abc" is listed twice/],
    [{ REDDIT_CLIENTS: 'abc:s1', REDDIT_CLIENT_ID: 'abc', REDDIT_CLIENT_SECRET: 'x' }, /client id "abc" is listed twice/],
    [{ REDDIT_CLIENTS: 'a b:s1' }, /^REDDIT_CLIENTS entry 1: the client id must be 1 to 64 printable ASCII characters/],
    [{ REDDIT_CLIENTS: 'abc:s 1' }, /^REDDIT_CLIENTS entry 1 \("abc"\): the client secret must be/],
    [{ REDDIT_BASE_URL: 'https://www.reddit.com/r/x' }, /REDDIT_BASE_URL must be an http\(s\) origin/],
    [{ REDDIT_USER_AGENT: 'bad\u0007agent' }, /REDDIT_USER_AGENT must be 1 to 256 printable ASCII/],
    [{ REDDIT_USER_AGENT: 'x'.repeat(257) }, /REDDIT_USER_AGENT/],
    [{ PLAN_RATE_LIMITS: 'gold=5' }, /PLAN_RATE_LIMITS: bad entry "gold=5"/],
    [{ SSRF_ALLOW_CIDRS: '10.0.0.0/33' }, /^SSRF_ALLOW_CIDRS: /],
    [{ SSRF_DNS_SERVERS: 'dns.example' }, /^SSRF_DNS_SERVERS: "dns.example" is not a nameserver address/],
    [{ SSRF_DNS_SERVERS: '127.0.0.1:0' }, /^SSRF_DNS_SERVERS: "127.0.0.1:0" has a bad port/],
    [{ SSRF_DNS_SERVERS: ' , ' }, /^SSRF_DNS_SERVERS: list at least one nameserver/],
    [{ SSRF_DNS_TIMEOUT_MS: '50' }, /SSRF_DNS_TIMEOUT_MS must be between 100 and 60000/],
    [{ SSRF_DNS_CACHE_TTL_MS: '-1' }, /SSRF_DNS_CACHE_TTL_MS must be between 0 and 86400000, got -1/],
    [{ SSRF_DNS_NEGATIVE_TTL_MS: '5s' }, /SSRF_DNS_NEGATIVE_TTL_MS must be an integer/],
    [{ SSRF_DNS_CACHE_MAX_ENTRIES: '0' }, /SSRF_DNS_CACHE_MAX_ENTRIES must be between 1 and 1000000/],
    [{ SSRF_DNS_MAX_CONCURRENT_PER_CUSTOMER: '0' }, /SSRF_DNS_MAX_CONCURRENT_PER_CUSTOMER must be between 1 and 1024/],
    [{ ENCRYPTION_KEYS: 'k1' }, /^ENCRYPTION_KEYS: entry 1 must be id:base64key/],
    [{ ENCRYPTION_KEYS: 'k1:c2hvcnQ=' }, /^ENCRYPTION_KEYS: key "k1" must be 32 bytes/],
    [{ ENCRYPTION_KEYS: 'k1:not*base64' }, /^ENCRYPTION_KEYS: key "k1" is not base64/],
    [{ ENCRYPTION_KEYS: 'bad.id:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' }, /^ENCRYPTION_KEYS: entry 1: key id must be/],
    [{ ENCRYPTION_KEYS: 'k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=,k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' }, /^ENCRYPTION_KEYS: key id "k1" appears twice/],
    [{ ENCRYPTION_KEYS: 'k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', ENCRYPTION_KEY_FILE: '/tmp/x.key' }, /ENCRYPTION_KEYS and ENCRYPTION_KEY_FILE exclude each other/],
    [{ CURSOR_SECRET: 'change-me-to-a-long-random-secret-of-32+-chars' }, /^CURSOR_SECRET entry #1 is a placeholder/],
    [{ CURSOR_SECRET: 'x'.repeat(40) }, /^CURSOR_SECRET entry #1 is a placeholder/],
    [{ SSRF_ALLOW_DESTINATIONS: 'localhost:9443' }, /^SSRF_ALLOW_DESTINATIONS: "localhost:9443" is not an IP:port destination/],
    [{ SSRF_ALLOW_DESTINATIONS: '127.0.0.1' }, /^SSRF_ALLOW_DESTINATIONS: "127.0.0.1" is not an IP:port destination/],
    [{ SSRF_ALLOW_DESTINATIONS: '127.0.0.1:0' }, /^SSRF_ALLOW_DESTINATIONS: "127.0.0.1:0": the port must be from 1 to 65535/],
  ])('refuses %j', (env, message) => bad(env as Record<string, string>, message));
});

describe('REDDIT_CLIENTS', () => {
  it('reads id:secret pairs besides REDDIT_CLIENT_ID, and never echoes a secret in an error', () => {
    expect(loadConfig({ REDDIT_CLIENTS: ' one:s-1 , two:s:2 ' }).trends.redditClients).toEqual([
      { id: 'one', secret: 's-1' },
      { id: 'two', secret: 's:2' },
    ]);
    expect(loadConfig({}).trends.redditClients).toEqual([]);
    for (const bad of ['one:topsecret,one:othersecret', 'x:top secret']) {
      expect(() => loadConfig({ REDDIT_CLIENTS: bad })).toThrow(ConfigError);
      try {
        loadConfig({ REDDIT_CLIENTS: bad });
      } catch (err) {
        expect((err as Error).message).not.toMatch(/topsecret|othersecret|top secret/);
      }
    }
  });
});

describe('encryption keys', () => {
  const k = (byte: number) => Buffer.alloc(32, byte).toString('base64');
  it('reads ENCRYPTION_KEYS newest first, in standard or URL-safe base64, and never echoes a key in an error', () => {
    const c = loadConfig({ ENCRYPTION_KEYS: `k2:${k(2)}, k1:${k(0xfb).replace(/\+/g, '-').replace(/\//g, '_')}` });
    expect(c.encryption.keys.map((e) => e.id)).toEqual(['k2', 'k1']);
    expect(c.encryption.keys[1].key).toEqual(Buffer.alloc(32, 0xfb));
    const wrongLength = Buffer.alloc(31, 7).toString('base64');
    expect(() => loadConfig({ ENCRYPTION_KEYS: `k1:${wrongLength}` })).toThrow(expect.objectContaining({ message: expect.not.stringContaining(wrongLength) }));
  });

  it('puts the default key file beside the SQLite file, in ./data on PostgreSQL, and nowhere for :memory:', () => {
    expect(encryptionKeyFile(loadConfig({ DATABASE_URL: 'sqlite:/srv/db/x.db' }))).toBe('/srv/db/trendhooks.key');
    expect(encryptionKeyFile(loadConfig({ DATABASE_URL: 'postgres://h/db' }), '/srv')).toBe('/srv/data/trendhooks.key');
    expect(encryptionKeyFile(loadConfig({ DATABASE_URL: 'sqlite::memory:' }))).toBeNull();
    expect(encryptionKeyFile(loadConfig({ ENCRYPTION_KEY_FILE: 'keys/th.key' }, '/etc'), '/srv')).toBe('/etc/keys/th.key');
  });
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

describe('the configured database per dialect', () => {
  it('is described without the password', () => {
    expect(describeDatabase(loadConfig({ DATABASE_URL: 'sqlite:/srv/db/x.db' }))).toBe('SQLite /srv/db/x.db');
    expect(describeDatabase(loadConfig({ DATABASE_URL: 'postgres://u:secret@db.example:6543/th' }))).toBe('PostgreSQL db.example:6543/th');
  });

  it('refuses a database type other than sqlite or postgres instead of treating it as SQLite', () => {
    const config = { database: { type: 'mysql', path: '/srv/db/x.db' }, encryption: { keyFile: null } } as unknown as Parameters<typeof encryptionKeyFile>[0];
    expect(() => encryptionKeyFile(config)).toThrow(UnsupportedDatabaseError);
    expect(() => describeDatabase(config)).toThrow('the database type is "mysql", not "sqlite" or "postgres"');
  });
});
