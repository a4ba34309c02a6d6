/**
 * What a host Nest app may import. Modules register no global guards, pipes or filters; controllers
 * carry their own guard, envelope and error filter, so the routes answer the same inside a host.
 * README "Using the modules in your own Nest app" has the whole example (test/packed-host/, run from
 * the packed tarball by npm run test:packed); test/host-app/ runs a fuller host from the sources.
 *
 *   @Module({ imports: [
 *     TypeOrmModule.forRoot({ name: 'host', ..., entities: [...hostEntities, ...trendhooksEntities({ apiKeys: false })],
 *       migrations: [...hostMigrations, ...trendhooksMigrations('postgres', { apiKeys: false })], migrationsTableName: 'host_migrations' }),
 *     TrendhooksModule.forRoot({ dataSource: 'host' }),   // the connection and the one CLOCK every module uses
 *     AuthModule.forRootAsync({ imports, inject, useFactory: (…) => ({ principalResolver }) }), // your identity; or ApiKeysModule + AuthModule.forRoot({})
 *     CryptoModule.forRoot({ keys: parseEncryptionKeys(...) }), PaginationModule.forRoot({ secrets: [...] }), SsrfModule.forRoot({}),
 *     DeliveryModule.forRoot({ worker: true }), WebhooksModule,
 *   ] })
 *   NestFactory.create(HostModule) // Nest's body parser on or off: trendhooks reads its own JSON bodies
 *
 * The configurable modules (TrendhooksModule, AuthModule, CryptoModule, PaginationModule,
 * SsrfModule, DeliveryModule, MetricsModule, TrendsModule) have forRoot and forRootAsync({ imports,
 * inject, useFactory }), and an Inject…Options() decorator for their options; WebhooksModule and
 * PostsModule take no options. Only TrendhooksModule is global (and, as optional hooks, ApiKeysModule,
 * MetricsModule and TrendsModule): forRoot sets a module's options once, and every module that
 * needs it imports it by its class; `isGlobal: true` (default false) shows its services everywhere.
 * To take trendhooks API keys instead of your own identity, import ApiKeysModule (the apiKeys feature)
 * and give AuthModule no principalResolver (README "Bring your own identity").
 *
 * The package's root entry (`trendhooks`). The standalone service (AppModule, createApp) is
 * `trendhooks/standalone` (src/standalone.ts), the CLI `trendhooks/cli`: importing the modules
 * loads neither, nor the HTTP adapters or commander (test/package.e2e-spec.ts).
 */
export { TrendhooksModule, InjectTrendhooksOptions, type TrendhooksModuleOptions, type TrendhooksAsyncOptions, type TrendhooksModuleFactoryOptions } from './core/trendhooks.module';
export { TRENDHOOKS_DATA_SOURCE, InjectTrendhooksDataSource } from './database/data-source.token';
export { TRENDHOOKS_OPTIONS } from './core/tokens';
export { AuthModule } from './auth/auth.module';
export { AUTH_OPTIONS, InjectAuthOptions, type AuthModuleOptions } from './auth/auth.options';
export { NO_PRINCIPAL_RESOLVER, PRINCIPAL_RESOLVER, InjectPrincipalResolver, type PrincipalResolver, type TrendhooksPrincipal } from './auth/principal';
export { PrincipalGuard } from './auth/principal.guard';
export { ApiKeyGuard } from './auth/api-key.guard';
export { ApiKeysModule } from './auth/api-keys.module';
export { PortalModule } from './portal/portal.module';
export { PortalSessionsModule } from './portal/portal-sessions.module';
export { PortalSessionsService } from './portal/portal-sessions.service';
export { withPortalSessions } from './portal/portal-principal.resolver';
export { PORTAL_OPTIONS, InjectPortalOptions, type PortalModuleOptions } from './portal/portal.options';
export { PORTAL_ENTITIES } from './portal/entities';
export { API_KEY_ENTITIES } from './auth/entities';
export { ApiKeyPrincipalResolver, type ApiKeyPrincipal } from './auth/api-key.principal-resolver';
export { ApiKeyService, Principal } from './auth/api-key.service';
export { PrivateDestinationsService } from './auth/private-destinations.service';
export { BusinessPlus, CurrentPrincipal } from './auth/plan.decorator';
export { PlanService } from './auth/plan.service';
export { RATE_LIMIT_STORE, RateLimitStore, MemoryRateLimitStore } from './auth/rate-limit.store';
export { RedisRateLimitStore, type RedisRateLimitStoreOptions } from './auth/redis-rate-limit.store';
export { MetricsModule } from './metrics/metrics.module';
export { METRICS_OPTIONS, InjectMetricsOptions, type MetricsModuleOptions } from './metrics/metrics.options';
export { Metrics, type DeliveryOutcome } from './metrics/metrics.service';
export { startMetricsServer, type MetricsServer, type MetricsServerOptions } from './metrics/metrics.listener';
export { CLOCK, Clock, SystemClock, InjectClock } from './common/clock';
export { AppError, ErrorCode, ERROR_STATUS } from './common/errors';
export { ApiExceptionFilter, DATABASE_UNAVAILABLE, type DatabaseUnavailableClassifier } from './common/exception.filter';
export { EnvelopeInterceptor } from './common/envelope.interceptor';
export { Paged } from './common/envelope';
export { AppConfig, loadConfig, type HttpAdapterName } from './config/config';
export { DEFAULT_PLAN_LIMITS, Plan, PlanLimits } from './auth/plans';
export {
  TRENDHOOKS_ENTITIES,
  TRENDHOOKS_CORE_ENTITIES,
  TRENDHOOKS_API_KEY_ENTITIES,
  TRENDHOOKS_SETTINGS_ENTITIES,
  TRENDHOOKS_POST_ENTITIES,
  trendhooksEntities,
} from './entities';
export { trendhooksMigrations, parseFeatures, FEATURE_NAMES, type TrendhooksFeatures, type FeatureName } from './database/features';
export { dialectOf, UnsupportedDatabaseError, type Dialect } from './database/dialect';
export { dataSourceOptions, runMigrations, schemaDrift, STANDALONE_MIGRATIONS_TABLE, type HostSchema } from './database/data-source';
export type { DatabaseConfig } from './database/dialect';
export { DatabaseUnavailableModule, isDatabaseUnavailable } from './database/unavailable';
// The standalone's series (recorded in trendhooks_migrations); a host uses trendhooksMigrations() instead.
export { POSTGRES_MIGRATIONS } from './database/migrations/postgres';
export { SQLITE_MIGRATIONS } from './database/migrations/sqlite';
export { CryptoModule } from './crypto/crypto.module';
export { CRYPTO_OPTIONS, InjectCryptoOptions, type CryptoModuleOptions } from './crypto/crypto.options';
export { SecretBox } from './crypto/secret-box';
export { EncryptionKeyRing, parseEncryptionKeys, generateEncryptionKey, type EncryptionKey } from './crypto/key-ring';
export { DeliveryModule } from './delivery/delivery.module';
export { DELIVERY_OPTIONS, InjectDeliveryOptions, type DeliveryModuleOptions } from './delivery/delivery.options';
export { WEBHOOK_DISABLED_TYPE, type WebhookDisabledEvent, type OnWebhookDisabled, type FoldedDisables } from './events/webhook-disabled';
export { EventsService } from './delivery/events.service';
export { SubscriptionSource, WebhookSubscriptions, type RoutedEvent, type SubscribedEndpoint } from './delivery/subscription-source';
export { DeliveryEndpoints, type NewEndpoint } from './delivery/endpoints';
export { buildOpenApiDocument, toOpenApi31, TRENDHOOKS_OPENAPI_COMPONENTS } from './openapi/document';
export { PaginationModule } from './pagination/pagination.module';
export { PAGINATION_OPTIONS, InjectPaginationOptions, type PaginationModuleOptions } from './pagination/pagination.options';
export { PaginationService, PageContext } from './pagination/pagination.service';
export { PostsModule } from './posts/posts.module';
export { PostsService } from './posts/posts.service';
export { PostStore } from './posts/post.store';
export { IngestService, type IngestListener, type IngestSummary, INGEST_LISTENER, InjectIngestListener } from './posts/ingest.service';
export type { PostResource } from './posts/dto/post.resource';
export { parsePost, parseJsonDocument, parseRedditText, type RedditPost } from './posts/reddit-parse';
export { SsrfModule } from './ssrf/ssrf.module';
export { SSRF_MODULE_OPTIONS, InjectSsrfOptions, type SsrfModuleOptions } from './ssrf/ssrf.module-definition';
export { SsrfPolicy, CheckedDestination } from './ssrf/ssrf-policy';
export { DNS_RESOLVER, DnsResolver, StaticDnsResolver, SystemDnsResolver } from './ssrf/resolver';
export { TrendsModule } from './trends/trends.module';
export { TRENDS_OPTIONS, InjectTrendsOptions, type TrendsModuleOptions, type PollerTuning } from './trends/trends.options';
export { WebhooksModule } from './webhooks/webhooks.module';
export { WebhooksService } from './webhooks/webhooks.service';
export {
  DeliveryTransport,
  signDelivery,
  type SignedDelivery,
  type DeliveryStage,
  type TransportDestination,
  type TransportRequest,
  type SendOutcome,
  type Delivered,
  type SendFailure,
  type Cancelled,
} from './delivery/transport/delivery-transport';
export { DeliveryQueue } from './delivery/queue/delivery-queue';
export { QueueWaker } from './delivery/queue/queue-waker';
export { WebhookStore, type Webhook } from './webhooks/webhook.store';
export { ApiKeyStore, type CustomerRef, type KeyOwner } from './auth/api-key.store';
export { TrendSourceLeaseStore } from './trends/reddit/trend-source-lease.store';
export type {
  DeliveredEventFields,
  DeliveredTrendEvent,
  RisingEventData,
  SurgeEventData,
  TrendEventData,
  TrendEventDataByKind,
  TrendEvidence,
  VelocityEventData,
} from './events/catalogue';
