import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CLOCK, SystemClock } from '../common/clock';
import { dialectProvider } from '../database/dialect';
import { DatabaseUnavailableModule } from '../database/unavailable';
import { JsonBodyMiddleware } from '../common/json-body.middleware';
import { WEBHOOK_ENTITIES } from './entities';
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
  imports: [TypeOrmModule.forFeature(WEBHOOK_ENTITIES), DatabaseUnavailableModule],
  controllers: [WebhooksController],
  providers: [
    { provide: CLOCK, useClass: SystemClock },
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
