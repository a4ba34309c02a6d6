import { AttemptEntity } from './attempt.entity';
import { DeliveryEntity } from './delivery.entity';
import { EventEntity } from './event.entity';
import { WebhookEntity } from './webhook.entity';

/**
 * The tables DeliveryModule reads and writes; the composition root adds them to the connection.
 * `webhooks` is the endpoints' storage (destinations, secrets, last_*), shared with the webhook API.
 */
export const DELIVERY_ENTITIES = [WebhookEntity, EventEntity, DeliveryEntity, AttemptEntity];
