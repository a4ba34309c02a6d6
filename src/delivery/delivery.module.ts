import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CLOCK, SystemClock } from '../common/clock';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { DeliveriesController } from './deliveries.controller';
import { DeliveriesService } from './deliveries.service';
import { DeliveryConfigurableModule } from './delivery.options';
import { DeliveryRepository } from './delivery.repository';
import { DeliveryWorker } from './delivery.worker';
import { DELIVERY_ENTITIES } from './entities';
import { EventsService } from './events.service';
import { DeliveryTransport } from './transport/delivery-transport';
import { HttpsWebhookTransport } from './transport/https-webhook.transport';

/**
 * Events, the delivery queue, the worker and the delivery routes. `DeliveryModule.forRoot({ worker:
 * false })` in API-only processes. The worker's poll uses @nestjs/schedule's registry when the
 * host imports `ScheduleModule.forRoot()`, a plain timer otherwise.
 */
@Module({
  imports: [TypeOrmModule.forFeature(DELIVERY_ENTITIES), WebhooksModule],
  controllers: [DeliveriesController],
  providers: [{ provide: CLOCK, useClass: SystemClock }, DeliveryRepository, { provide: DeliveryTransport, useClass: HttpsWebhookTransport }, DeliveryWorker, EventsService, DeliveriesService],
  exports: [EventsService, DeliveryWorker, DeliveryRepository],
})
export class DeliveryModule extends DeliveryConfigurableModule {}
