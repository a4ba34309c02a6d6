import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { dialectProvider } from '../database/dialect';
import { DatabaseUnavailableModule } from '../database/unavailable';
import { JsonBodyMiddleware } from '../common/json-body.middleware';
import { WebhookDeliveryStatus } from './webhook-delivery-status';
import { PostgresWebhookDeliveryStatus } from './webhook-delivery-status.postgres';
import { SqliteWebhookDeliveryStatus } from './webhook-delivery-status.sqlite';
import { WebhooksController } from './webhooks.controller';
import { WebhookStore } from './webhook.store';
import { PostgresWebhookStore } from './webhook.store.postgres';
import { SqliteWebhookStore } from './webhook.store.sqlite';
import { WebhooksService } from './webhooks.service';

/**
 * The webhook-management API (spec 4.1–4.4). Needs AuthModule, PaginationModule and SsrfModule
 * registered (they are global by default) on the same TypeORM connection.
 */
@Module({
  imports: [DatabaseUnavailableModule],
  controllers: [WebhooksController],
  providers: [
    dialectProvider(WebhookStore, { sqlite: SqliteWebhookStore, postgres: PostgresWebhookStore }),
    WebhooksService,
    dialectProvider(WebhookDeliveryStatus, { sqlite: SqliteWebhookDeliveryStatus, postgres: PostgresWebhookDeliveryStatus }),
  ],
  exports: [WebhookStore, WebhooksService, WebhookDeliveryStatus],
})
export class WebhooksModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(JsonBodyMiddleware).forRoutes(WebhooksController);
  }
}
