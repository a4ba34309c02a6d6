import { DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  ApiKeysModule,
  AuthModule,
  CryptoModule,
  DEFAULT_PLAN_LIMITS,
  DeliveryModule,
  generateEncryptionKey,
  PaginationModule,
  parseEncryptionKeys,
  PortalModule,
  SQLITE_MIGRATIONS,
  SsrfModule,
  StaticDnsResolver,
  TRENDHOOKS_ENTITIES,
  TrendhooksModule,
  TrendsModule,
} from '../src/index';

/**
 * A host's bad setting stops the host at start-up with the setting's name, through forRoot and
 * forRootAsync alike: before, an empty CURSOR_SECRET started and answered every list 500 (the cause
 * only in the log), and an empty key ring started on a key made up for the process. No request is
 * made: nothing here depends on the database, which is one SQLite file the app never gets to migrate.
 */
describe('a host with a bad trendhooks setting does not start, and the error names the setting', () => {
  let dir: string;
  beforeAll(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-host-config-'))));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** The host's modules with `modules` in place of the good settings of each. */
  // retryAttempts 0: a start refused by a module's options leaves TypeORM's connection attempt in
  // flight (the options are checked before anything waits for it); it must not retry after the suite.
  function host(modules: { crypto?: DynamicModule; pagination?: DynamicModule; ssrf?: DynamicModule; delivery?: DynamicModule; trends?: DynamicModule; portal?: DynamicModule; auth?: DynamicModule }): DynamicModule {
    @Module({})
    class ConfigHostModule {}
    return {
      module: ConfigHostModule,
      imports: [
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database: path.join(dir, 'host.db'), entities: [...TRENDHOOKS_ENTITIES], migrations: SQLITE_MIGRATIONS, migrationsRun: false, retryAttempts: 0 }),
        TrendhooksModule.forRoot(),
        modules.crypto ?? CryptoModule.forRoot({ keys: [generateEncryptionKey()] }),
        modules.pagination ?? PaginationModule.forRoot({ secrets: ['x'.repeat(20) + 'q7Lk2mZp9Rv4Tb8W'] }),
        ApiKeysModule,
        modules.auth ?? AuthModule.forRoot({}),
        modules.ssrf ?? SsrfModule.forRoot({ allowCidrs: '127.0.0.1/32', resolver: new StaticDnsResolver() }),
        modules.delivery ?? DeliveryModule.forRoot({ worker: false, concurrency: 8, pollIntervalMs: 50 }),
        modules.trends ?? TrendsModule.forRoot({ pollIntervalMs: 200, trackedSubreddits: ['r/node'], redditBaseUrl: 'http://127.0.0.1:9' }),
        modules.portal ?? PortalModule.forRoot({ baseUrl: 'https://hooks.example.org/th', frameAncestors: ['https://app.example.com'] }),
      ],
    };
  }

  async function startError(module: DynamicModule): Promise<string> {
    const app = await NestFactory.create(module, { logger: false, abortOnError: false }).catch((err: Error) => err);
    if (!(app instanceof Error)) {
      await app.close();
      return 'started';
    }
    return app.message;
  }

  it('starts with good settings (the cases below differ only in the one setting)', async () => {
    expect(await startError(host({}))).toBe('started');
  });

  describe('PaginationModule', () => {
    it('refuses an empty or short cursor secret at start-up, naming CURSOR_SECRET, from forRoot and forRootAsync', async () => {
      expect(await startError(host({ pagination: PaginationModule.forRoot({ secrets: [''] }) }))).toMatch(/^CURSOR_SECRET .*entry #1 has 0 characters; at least 32 are required/);
      const asyncShort = PaginationModule.forRootAsync({ useFactory: async () => ({ secrets: ['a'.repeat(40), 'short'] }) });
      expect(await startError(host({ pagination: asyncShort }))).toMatch(/^CURSOR_SECRET .*entry #2 has 5 characters/);
      expect(await startError(host({ pagination: PaginationModule.forRoot({ secrets: ['change-me-change-me-change-me-change-me'] }) }))).toMatch(/^CURSOR_SECRET entry #1 is a placeholder/);
      // The cursor lifetime too (before, a TTL of 0 started and failed at the first list).
      expect(await startError(host({ pagination: PaginationModule.forRoot({ ttlSeconds: 0 }) }))).toMatch(/^CURSOR_TTL_SECONDS \(PaginationModule's ttlSeconds\) must be an integer from 1/);
    });
  });

  describe('CryptoModule', () => {
    it('refuses an empty or bad key ring at start-up, naming ENCRYPTION_KEYS, from forRoot and forRootAsync', async () => {
      expect(await startError(host({ crypto: CryptoModule.forRoot({ keys: [] }) }))).toMatch(/^ENCRYPTION_KEYS \(CryptoModule's keys\) is empty/);
      const asyncShort = CryptoModule.forRootAsync({ useFactory: async () => ({ keys: [{ id: 'k1', key: Buffer.alloc(16) }] }) });
      expect(await startError(host({ crypto: asyncShort }))).toMatch(/^ENCRYPTION_KEYS \(CryptoModule's keys\): key "k1" must be 32 bytes/);
      // The host's own parse of its setting (README's example) names it too.
      expect(() => parseEncryptionKeys('')).toThrow(/^ENCRYPTION_KEYS: no key given/);
    });
  });

  describe('SsrfModule', () => {
    it('refuses an unparsable CIDR or destination and a bad DNS figure at start-up, naming the SSRF_* setting, from forRoot and forRootAsync', async () => {
      expect(await startError(host({ ssrf: SsrfModule.forRoot({ allowCidrs: '10.0.0.0/33' }) }))).toMatch(/^SSRF_ALLOW_CIDRS \(SsrfModule's allowCidrs\): /);
      expect(await startError(host({ ssrf: SsrfModule.forRoot({ denyCidrs: 'not-a-cidr' }) }))).toMatch(/^SSRF_DENY_CIDRS \(SsrfModule's denyCidrs\): /);
      const asyncDest = SsrfModule.forRootAsync({ useFactory: async () => ({ allowDestinations: 'localhost:9443' }) });
      expect(await startError(host({ ssrf: asyncDest }))).toMatch(/^SSRF_ALLOW_DESTINATIONS \(SsrfModule's allowDestinations\): "localhost:9443" is not an IP:port destination/);
      expect(await startError(host({ ssrf: SsrfModule.forRoot({ dnsMaxConcurrentPerCustomer: 2.5 }) }))).toMatch(/^SSRF_DNS_MAX_CONCURRENT_PER_CUSTOMER \(SsrfModule's dnsMaxConcurrentPerCustomer\) must be an integer from 1 to 1024, got 2.5/);
      expect(await startError(host({ ssrf: SsrfModule.forRoot({ dnsCacheTtlMs: -1 }) }))).toMatch(/^SSRF_DNS_CACHE_TTL_MS \(SsrfModule's dnsCacheTtlMs\) must be an integer from 0/);
    });
  });

  describe('DeliveryModule', () => {
    it('refuses a negative or fractional concurrency, a zero poll interval and a figure past its range at start-up, naming the DELIVERY_* setting', async () => {
      expect(await startError(host({ delivery: DeliveryModule.forRoot({ worker: false, concurrency: -4 }) }))).toMatch(/^DELIVERY_CONCURRENCY \(DeliveryModule's concurrency\) must be an integer from 1 to 1024, got -4/);
      const asyncFraction = DeliveryModule.forRootAsync({ useFactory: async () => ({ worker: false, concurrency: 1.5 }) });
      expect(await startError(host({ delivery: asyncFraction }))).toMatch(/^DELIVERY_CONCURRENCY \(DeliveryModule's concurrency\) must be an integer/);
      expect(await startError(host({ delivery: DeliveryModule.forRoot({ worker: false, pollIntervalMs: 0 }) }))).toMatch(/^DELIVERY_POLL_INTERVAL_MS \(DeliveryModule's pollIntervalMs\)/);
      expect(await startError(host({ delivery: DeliveryModule.forRoot({ worker: false, batchSize: 5000 }) }))).toMatch(/^DELIVERY_BATCH_SIZE \(DeliveryModule's batchSize\) must be an integer from 1 to 1000, got 5000/);
      expect(await startError(host({ delivery: DeliveryModule.forRoot({ worker: false, timeoutMs: Number.NaN }) }))).toMatch(/^DELIVERY_TIMEOUT_MS \(DeliveryModule's timeoutMs\)/);
      expect(await startError(host({ delivery: DeliveryModule.forRoot({ worker: false, circuit: { throttle: 0 } }) }))).toMatch(/^DELIVERY_CIRCUIT_THROTTLE \(DeliveryModule's circuit.throttle\) must be an integer from 1/);
      expect(await startError(host({ delivery: DeliveryModule.forRoot({ worker: false, disableAfterMs: 500 }) }))).toMatch(/^WEBHOOK_DISABLE_AFTER \(DeliveryModule's disableAfterMs\) must be an integer from 1000/);
    });
  });

  describe('TrendsModule', () => {
    it('refuses a bad Reddit origin, subreddit, TTL or concurrency at start-up, naming the REDDIT_* setting, from forRoot and forRootAsync', async () => {
      expect(await startError(host({ trends: TrendsModule.forRoot({ redditBaseUrl: 'www.reddit.com' }) }))).toMatch(/^REDDIT_BASE_URL \(TrendsModule's redditBaseUrl\) must be an http\(s\) origin/);
      const asyncConcurrency = TrendsModule.forRootAsync({ useFactory: async () => ({ pollConcurrency: 0 }) });
      expect(await startError(host({ trends: asyncConcurrency }))).toMatch(/^REDDIT_POLL_CONCURRENCY \(TrendsModule's pollConcurrency\) must be an integer from 1 to 64, got 0/);
      expect(await startError(host({ trends: TrendsModule.forRoot({ trackedSubreddits: ['no spaces'] }) }))).toMatch(/^TRACKED_SUBREDDITS \(TrendsModule's trackedSubreddits\): "no spaces" is not a subreddit name/);
      expect(await startError(host({ trends: TrendsModule.forRoot({ postsRetentionDays: 0 }) }))).toMatch(/^POSTS_RETENTION_DAYS \(TrendsModule's postsRetentionDays\)/);
      expect(await startError(host({ trends: TrendsModule.forRoot({ redditClientId: 'id' }) }))).toMatch(/^REDDIT_CLIENT_ID and REDDIT_CLIENT_SECRET/);
    });
  });

  describe('PortalModule', () => {
    it('refuses a bad base URL, frame ancestor or TTL at start-up, naming the PORTAL_* setting, from forRoot and forRootAsync', async () => {
      expect(await startError(host({ portal: PortalModule.forRoot({ baseUrl: 'hooks.example.org' }) }))).toMatch(/^PORTAL_BASE_URL \(PortalModule's baseUrl\) must be an absolute http\(s\) URL/);
      const asyncTtl = PortalModule.forRootAsync({ useFactory: async () => ({ linkTtlSeconds: 0 }) });
      expect(await startError(host({ portal: asyncTtl }))).toMatch(/^PORTAL_LINK_TTL_SECONDS \(PortalModule's linkTtlSeconds\) must be an integer from 60 to 86400, got 0/);
      expect(await startError(host({ portal: PortalModule.forRoot({ frameAncestors: ['*'] }) }))).toMatch(/^PORTAL_FRAME_ANCESTORS \(PortalModule's frameAncestors\): "\*" is not an origin/);
    });
  });

  describe('AuthModule', () => {
    it("refuses a plan's rate below 1 (PLAN_RATE_LIMITS) or a fractional unauthenticated rate at start-up, from forRoot and forRootAsync", async () => {
      const plans = { ...DEFAULT_PLAN_LIMITS, pro: { ...DEFAULT_PLAN_LIMITS.pro, requestsPerMinute: 0 } };
      expect(await startError(host({ auth: AuthModule.forRoot({ plans }) }))).toMatch(/^PLAN_RATE_LIMITS \(AuthModule's plans.pro.requestsPerMinute\) must be a whole number of at least 1, got 0/);
      const asyncRate = AuthModule.forRootAsync({ useFactory: async () => ({ unauthenticatedPerMinute: 0.5 }) });
      expect(await startError(host({ auth: asyncRate }))).toMatch(/^AuthModule's unauthenticatedPerMinute must be a whole number of at least 1, got 0.5/);
    });
  });
});
