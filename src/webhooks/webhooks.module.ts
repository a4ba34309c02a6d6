import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CryptoModule } from '../crypto/crypto.module';
import { DeliveryModule } from '../delivery/delivery.module';
import { BuiltInSubscriptions } from '../delivery/subscription-source';
import { PaginationModule } from '../pagination/pagination.module';
import { SsrfModule } from '../ssrf/ssrf.module';
import { InjectPrincipalResolver, PrincipalResolver, requirePrincipalResolver } from '../auth/principal';
import { dialectProvider } from '../database/dialect';
import { DatabaseUnavailableModule } from '../database/unavailable';
import { JsonBodyMiddleware, ownJsonBodies } from '../common/json-body.middleware';
import { DeliveriesController } from './deliveries.controller';
import { DeliveriesService } from './deliveries.service';
import { EventsController } from './events.controller';
import { EventsHistoryService } from './events-history.service';
import { RecoverBudget } from './recover-budget';
import { RecoverController } from './recover.controller';
import { RecoverService } from './recover.service';
import { WebhooksController } from './webhooks.controller';
import { WebhookStore } from './webhook.store';
import { PostgresWebhookStore } from './webhook.store.postgres';
import { SqliteWebhookStore } from './webhook.store.sqlite';
import { WebhooksService } from './webhooks.service';
import { WebhookPause } from './webhook-pause';

/**
 * The webhook-management API (spec 4.1–4.4), its delivery sub-resources (delivery log, retry,
 * test events, recover) and the events history of the caller's subscriptions. The host configures the modules it imports with their forRoot (on the same
 * TypeORM connection). Webhooks depend on delivery, never the other way round: DeliveryModule works
 * without this module. A webhook is a subscription (this module's `webhook_subscriptions`) and an
 * endpoint (delivery's EndpointStore); the subscriptions are attached to DeliveryModule as its
 * built-in source. A webhook's `source_status` comes from TrendsModule when it is registered.
 */
@Module({
  imports: [DatabaseUnavailableModule, AuthModule, PaginationModule, SsrfModule, CryptoModule, DeliveryModule],
  controllers: [WebhooksController, DeliveriesController, RecoverController, EventsController],
  providers: [
    dialectProvider(WebhookStore, { sqlite: SqliteWebhookStore, postgres: PostgresWebhookStore }),
    WebhooksService,
    DeliveriesService,
    RecoverService,
    RecoverBudget,
    WebhookPause,
    EventsHistoryService,
    // Our bodies are read by us even when the host keeps Nest's body parser on.
    ownJsonBodies(WebhooksController, RecoverController),
  ],
  exports: [WebhookStore, WebhooksService],
})
export class WebhooksModule implements NestModule {
  constructor(@InjectPrincipalResolver() resolver: PrincipalResolver, builtIn: BuiltInSubscriptions, store: WebhookStore) {
    requirePrincipalResolver(resolver);
    // The webhooks' subscriptions route events (unless the host gave DeliveryModule a source of its own) and tell the poller what to track.
    builtIn.attach(store);
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(JsonBodyMiddleware).forRoutes(WebhooksController, RecoverController);
  }
}
