import { AttemptEntity } from './attempt.entity';
import { DeliveryEntity } from './delivery.entity';
import { EventEntity } from './event.entity';

/** The tables DeliveryModule reads and writes; the composition root adds them to the connection. */
export const DELIVERY_ENTITIES = [EventEntity, DeliveryEntity, AttemptEntity];
