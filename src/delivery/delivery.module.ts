import { Module } from '@nestjs/common';
import { dialectProvider } from '../database/dialect';
import { DatabaseUnavailableModule } from '../database/unavailable';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { DeliveriesController } from './deliveries.controller';
import { DeliveriesService } from './deliveries.service';
import { DeliveryConfigurableModule } from './delivery.options';
import { DeliveryWorker } from './delivery.worker';
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

/**
 * Events, the delivery queue, the worker and the delivery routes. `DeliveryModule.forRoot({ worker:
 * false })` in API-only processes. The worker's poll uses @nestjs/schedule's registry when the
 * host imports `ScheduleModule.forRoot()`, a plain timer otherwise.
 */
@Module({
  imports: [WebhooksModule, DatabaseUnavailableModule],
  controllers: [DeliveriesController],
  providers: [
    dialectProvider(DeliveryQueue, { sqlite: SqliteDeliveryQueue, postgres: PostgresDeliveryQueue }),
    dialectProvider(QueueWaker, { sqlite: InProcessWaker, postgres: PostgresNotifyWaker }),
    DeliveryQueueMetrics,
    { provide: DeliveryTransport, useClass: HttpsWebhookTransport },
    DeliveryWorker,
    EventsService,
    DeliveriesService,
  ],
  exports: [EventsService, DeliveryWorker, DeliveryQueue, QueueWaker],
})
export class DeliveryModule extends DeliveryConfigurableModule {}
