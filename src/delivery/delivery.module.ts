import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { PrivateDestinationsService } from '../auth/private-destinations.service';
import { CLOCK, Clock } from '../common/clock';
import { configuredModule } from '../core/configured-module';
import { CryptoModule } from '../crypto/crypto.module';
import { SsrfPolicy } from '../ssrf/ssrf-policy';
import { dialectProvider } from '../database/dialect';
import { SsrfModule } from '../ssrf/ssrf.module';
import { DatabaseUnavailableModule } from '../database/unavailable';
import { DeliveryConfigurableModule, DELIVERY_OPTIONS, DELIVERY_OPTIONS_ASYNC_TYPE, DELIVERY_OPTIONS_TYPE, DeliveryModuleOptions } from './delivery.options';
import { DestinationCircuitBreaker } from './circuit/destination-circuit-breaker';
import { DestinationCircuitStore } from './circuit/destination-circuit.store';
import { DeliveryWorker } from './delivery.worker';
import { EndpointSecrets } from './endpoint-secrets';
import { DeliveryEndpoints } from './endpoints';
import { EventsService } from './events.service';
import { DeliveryQueue } from './queue/delivery-queue';
import { InProcessWaker } from './queue/in-process.waker';
import { PostgresDeliveryQueue } from './queue/postgres/postgres-delivery-queue';
import { PostgresNotifyWaker } from './queue/postgres/postgres-notify.waker';
import { DeliveryQueueMetrics } from './queue/queue-metrics';
import { QueueWaker } from './queue/queue-waker';
import { SqliteDeliveryQueue } from './queue/sqlite/sqlite-delivery-queue';
import { DeliveryTransport } from './transport/delivery-transport';
import { HttpsWebhookTransport } from './transport/https-webhook.transport';
import { WebhookDeliveryStatus } from './status/webhook-delivery-status';
import { PostgresWebhookDeliveryStatus } from './status/webhook-delivery-status.postgres';
import { SqliteWebhookDeliveryStatus } from './status/webhook-delivery-status.sqlite';
import { BuiltInSubscriptions, SubscriptionSource, WebhookSubscriptions } from './subscription-source';
import { EndpointStore } from './endpoint.store';
import { WebhookLifecycle } from './lifecycle/webhook-lifecycle';
import { OperationsNotificationStore } from './lifecycle/operations-notification.store';
import { OperationsNotifications } from './lifecycle/operations-notifications';

/** DeliveryModule's options (configuredModule). */
@Module({})
class DeliveryOptionsModule extends DeliveryConfigurableModule {}

/**
 * Events, the delivery queue, the worker and the endpoints it sends to; no routes (the delivery
 * log, retry and test routes are the webhook API's: WebhooksModule). `DeliveryModule.forRoot({
 * worker: false })` in API-only processes; `forRoot({ subscriptions })` routes events through the
 * host's own SubscriptionSource instead of the webhooks created through the API, and `forRoot({
 * transport })` sends through the host's own DeliveryTransport instead of HTTPS, and `forRoot({
 * onWebhookDisabled })` hears of each webhook the worker disables on its own (410, or failing). The worker's poll
 * uses @nestjs/schedule's registry when the host imports `ScheduleModule.forRoot()`, a plain timer
 * otherwise.
 */
@Module({
  // Private-destination grants (AuthModule), the destination policy (SsrfModule), signing secrets at rest (CryptoModule).
  imports: [DatabaseUnavailableModule, AuthModule, SsrfModule, CryptoModule],
  providers: [
    dialectProvider(DeliveryQueue, { sqlite: SqliteDeliveryQueue, postgres: PostgresDeliveryQueue }),
    dialectProvider(QueueWaker, { sqlite: InProcessWaker, postgres: PostgresNotifyWaker }),
    DeliveryQueueMetrics,
    {
      // The host's own transport (forRoot({ transport })), or the HTTPS one, built only when used:
      // one instance either way, so Nest calls its shutdown hook once.
      provide: DeliveryTransport,
      inject: [DELIVERY_OPTIONS, SsrfPolicy, PrivateDestinationsService, CLOCK],
      useFactory: (o: DeliveryModuleOptions, ssrf: SsrfPolicy, privateDestinations: PrivateDestinationsService, clock: Clock) =>
        o.transport ?? new HttpsWebhookTransport(ssrf, privateDestinations, clock, o),
    },
    DestinationCircuitStore,
    DestinationCircuitBreaker,
    DeliveryWorker,
    WebhookLifecycle,
    // The operators' webhook.disabled notifications (forRoot({ operations })): stored, folded, retried.
    OperationsNotificationStore,
    OperationsNotifications,
    dialectProvider(WebhookDeliveryStatus, { sqlite: SqliteWebhookDeliveryStatus, postgres: PostgresWebhookDeliveryStatus }),
    // The webhook API's subscriptions, attached by WebhooksModule (which owns their table).
    BuiltInSubscriptions,
    {
      provide: SubscriptionSource,
      inject: [DELIVERY_OPTIONS, BuiltInSubscriptions],
      useFactory: (o: DeliveryModuleOptions, builtIn: BuiltInSubscriptions) => o.subscriptions ?? builtIn,
    },
    // The subreddits webhooks subscribe to, asked by TrendsModule: the webhook API's, whatever source routes events.
    { provide: WebhookSubscriptions, useExisting: BuiltInSubscriptions },
    EndpointStore,
    EventsService,
    DeliveryEndpoints,
    // The signing secrets' table, shown to SecretBox's startup check (it registers itself).
    EndpointSecrets,
  ],
  exports: [EventsService, DeliveryWorker, DestinationCircuitStore, DeliveryQueue, QueueWaker, WebhookDeliveryStatus, WebhookLifecycle, SubscriptionSource, WebhookSubscriptions, BuiltInSubscriptions, DeliveryEndpoints, EndpointStore],
})
export class DeliveryModule {
  static forRoot(options: typeof DELIVERY_OPTIONS_TYPE): DynamicModule {
    return configuredModule(DeliveryModule, DeliveryOptionsModule.forRoot(options), options.isGlobal);
  }

  static forRootAsync(options: typeof DELIVERY_OPTIONS_ASYNC_TYPE): DynamicModule {
    return configuredModule(DeliveryModule, DeliveryOptionsModule.forRootAsync(options), options.isGlobal);
  }
}
