import type { Clock } from './common/clock';
import { DynamicModule, ExecutionContext, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { LogStream } from './common/log-types';
import { ApiKeysModule } from './auth/api-keys.module';
import { AuthModule } from './auth/auth.module';
import { PrincipalGuard } from './auth/principal.guard';
import { RedisRateLimitStore } from './auth/redis-rate-limit.store';
import { ApiExceptionFilter, UNMATCHED_ROUTE_HOOK, UnmatchedRouteHook } from './common/exception.filter';
import { httpDrainProviders } from './common/graceful-shutdown';
import { structuredLogModules } from './common/logging';
import { RequestIdModule } from './common/request-id.middleware';
import type { AppConfig } from './config/config';
import { APP_CONFIG } from './config/config.module';
import { encryptionKeyFile } from './config/config';
import { CryptoModule } from './crypto/crypto.module';
import { TrendhooksModule } from './core/trendhooks.module';
import { dataSourceOptions } from './database/data-source';
import { DatabaseUnavailableModule } from './database/unavailable';
import { DeliveryModule } from './delivery/delivery.module';
import { HealthModule } from './health/health.module';
import { MetricsListener } from './metrics/metrics.listener';
import { MetricsModule } from './metrics/metrics.module';
import { Metrics } from './metrics/metrics.service';
import { TRENDHOOKS_ENTITIES } from './entities';
import { DocsModule } from './openapi/docs.module';
import { PaginationModule } from './pagination/pagination.module';
import { PostsModule } from './posts/posts.module';
import { PortalModule } from './portal/portal.module';
import { withPortalSessions } from './portal/portal-principal.resolver';
import { PortalSessionsModule } from './portal/portal-sessions.module';
import { PortalSessionsService } from './portal/portal-sessions.service';
import type { TrendParams } from './trends/subreddit-trends';
import { TrendsModule } from './trends/trends.module';
import type { PollerTuning } from './trends/trends.options';
import { SsrfModule } from './ssrf/ssrf.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import type { DnsResolver } from './ssrf/resolver';

export type Role = 'all' | 'api' | 'worker' | 'pipeline';
export const ROLES: readonly Role[] = ['all', 'api', 'worker', 'pipeline'];

export interface AppModuleOverrides {
  /** Which parts run in this process (`trendhooks serve --role`); default all. */
  role?: Role;
  /** Tests replace DNS with a fixed table. */
  resolver?: DnsResolver;
  /** Tests fix the retry jitter. */
  random?: () => number;
  /** Tests shrink the detectors' buckets and warm-up. */
  trendParams?: TrendParams;
  /** Runs the Reddit poller or not, whatever the role (tests keep it off unless a fake Reddit is up). */
  poller?: boolean;
  /** Tests shorten the poller's backoffs and re-read gaps. */
  pollerTuning?: Partial<PollerTuning>;
  /** Tests move time (e.g. past a 24 h window) without sleeping; SystemClock otherwise. */
  clock?: Clock;
  /** JSON logs (pino) to `stream` (stdout when absent); false: none, the caller's Nest logger only. */
  logs?: { stream?: LogStream } | false;
}

/** The standalone service: the only place that wires things globally (error filter, request ids). */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig, overrides: AppModuleOverrides = {}): DynamicModule {
    const role = overrides.role ?? 'all';
    // Counters shared by every instance (only processes that serve HTTP count); closed on shutdown through its lifecycle hooks.
    const rateLimitStore = config.redisUrl && (role === 'all' || role === 'api') ? new RedisRateLimitStore({ url: config.redisUrl }) : undefined;
    const logs = overrides.logs ?? {};
    return {
      module: AppModule,
      imports: [
        // Request ids (X-Request-Id, 404s included): the access log's middleware gives them, or without the JSON logs one of their own.
        ...(logs === false ? [RequestIdModule] : structuredLogModules({ level: config.ops.logLevel, stream: logs.stream })),
        MetricsModule.forRoot({}),
        // Every entity mapped (a feature a host database lacks then fails as a missing table); migrations ran before, in createApp or the CLI.
        TypeOrmModule.forRoot(dataSourceOptions(config.database, TRENDHOOKS_ENTITIES, config.hostSchema)),
        // The data source (the default connection above) and the one clock of every module.
        TrendhooksModule.forRoot({ clock: overrides.clock }),
        // The error filter answers a database outage 503 (every controller's instance of it, too).
        DatabaseUnavailableModule,
        // The standalone service's identity: API keys (a host app may bring its own instead).
        ApiKeysModule,
        // API keys, and the portal's sessions on the same routes (withPortalSessions).
        AuthModule.forRootAsync({
          imports: [PortalSessionsModule],
          inject: [PortalSessionsService],
          useFactory: (portal: PortalSessionsService) => ({ plans: config.plans, rateLimitStore, extendResolver: (keys) => withPortalSessions(portal, keys) }),
        }),
        // The customer portal: GET /portal, its links and sessions.
        PortalModule.forRoot({
          baseUrl: config.portal.baseUrl ?? undefined,
          linkTtlSeconds: config.portal.linkTtlSeconds,
          sessionTtlSeconds: config.portal.sessionTtlSeconds,
          frameAncestors: config.portal.frameAncestors,
          exchangesPerMinute: config.portal.exchangesPerMinute,
        }),
        HealthModule.forRoot({ pings: rateLimitStore ? { redis: () => rateLimitStore.ping() } : {} }),
        CryptoModule.forRoot({ keys: config.encryption.keys, keyFile: encryptionKeyFile(config) ?? undefined }),
        PaginationModule.forRoot({ secrets: config.cursor.secrets, ttlSeconds: config.cursor.ttlSeconds }),
        SsrfModule.forRoot({
          allowCidrs: config.ssrf.allowCidrs,
          allowDestinations: config.ssrf.allowDestinations,
          denyCidrs: config.ssrf.denyCidrs,
          dnsTimeoutMs: config.ssrf.dnsTimeoutMs,
          dnsServers: config.ssrf.dnsServers ?? undefined,
          dnsCacheTtlMs: config.ssrf.dnsCacheTtlMs,
          dnsNegativeTtlMs: config.ssrf.dnsNegativeTtlMs,
          dnsCacheMaxEntries: config.ssrf.dnsCacheMaxEntries,
          dnsMaxConcurrentPerCustomer: config.ssrf.dnsMaxConcurrentPerCustomer,
          resolver: overrides.resolver,
        }),
        WebhooksModule,
        PostsModule,
        ScheduleModule.forRoot(),
        // GET /openapi.json and /docs (createApp hands it the document's builder).
        DocsModule,
        DeliveryModule.forRoot({
          worker: role === 'all' || role === 'worker',
          // null when DELIVERY_CA_FILE is unset: the configuration (loadConfig's env) is the only source here.
          ca: config.delivery.caPem,
          timeoutMs: config.delivery.timeoutMs,
          leaseMs: config.delivery.leaseMs,
          concurrency: config.delivery.concurrency,
          dnsLookupsPerCustomer: config.delivery.dnsLookupsPerCustomer ?? undefined,
          batchSize: config.delivery.batchSize,
          pollIntervalMs: config.delivery.pollIntervalMs,
          retryScheduleSeconds: config.delivery.retrySchedule ?? undefined,
          circuit: config.delivery.circuit,
          random: overrides.random,
          disableAfterMs: config.delivery.disableAfterMs,
          // The operators hear of each webhook disabled on its own (OPERATIONS_WEBHOOK_URL), signed as a delivery, stored and folded to one an hour per webhook.
          operations: config.operations ? { url: config.operations.webhookUrl, secret: config.operations.webhookSecret, ca: config.delivery.caPem } : undefined,
        }),
        TrendsModule.forRoot({
          // REDDIT_POLLING=off wins over the role and over a caller's override.
          poller: config.trends.polling && (overrides.poller ?? (role === 'all' || role === 'pipeline')),
          trackedSubreddits: config.trends.trackedSubreddits,
          redditBaseUrl: config.trends.redditBaseUrl,
          redditClientId: config.trends.redditClientId,
          redditClientSecret: config.trends.redditClientSecret,
          redditClients: config.trends.redditClients,
          redditUserAgent: config.trends.redditUserAgent,
          pollIntervalMs: config.trends.pollIntervalMs,
          pollConcurrency: config.trends.pollConcurrency,
          redditTimeoutMs: config.trends.redditTimeoutMs,
          postsRetentionDays: config.trends.postsRetentionDays,
          pollerTuning: overrides.pollerTuning,
          params: overrides.trendParams,
        }),
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        // Every /v1 answer carries the rate-limit headers and counts, an unknown route's 404 too.
        { provide: UNMATCHED_ROUTE_HOOK, inject: [PrincipalGuard], useFactory: unmatchedV1Route },
        // Prometheus on its own listener (METRICS_PORT), in every role; none when unset.
        { provide: MetricsListener, useFactory: (metrics: Metrics) => new MetricsListener(metrics, config.metrics), inject: [Metrics] },
        // Leaves 2 s of the shutdown bound for closing connections once requests are done.
        ...httpDrainProviders({ graceMs: Math.max(500, config.ops.shutdownTimeoutMs - 2000) }),
      ],
      exports: [APP_CONFIG],
    };
  }
}

/** An unmatched request under /v1 is charged by PrincipalGuard as a routed one is; others are not charged. */
function unmatchedV1Route(guard: PrincipalGuard): UnmatchedRouteHook {
  return async (host) => {
    const req = host.switchToHttp().getRequest<{ originalUrl?: string; url?: string }>();
    const path = (req.originalUrl ?? req.url ?? '').split('?')[0];
    if (path !== '/v1' && !path.startsWith('/v1/')) return undefined;
    // The host is the router's ExecutionContextHost, without a handler or class: no route matched.
    return guard.chargeUnmatched(host as ExecutionContext);
  };
}
