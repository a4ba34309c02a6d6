import { AttemptEntity } from './attempt.entity';
import { DestinationCircuitEntity } from './circuit/destination-circuit.entity';
import { DeliveryEntity } from './delivery.entity';
import { EventEntity } from './event.entity';
import { EndpointEntity } from './endpoint.entity';
import { OperationsNotificationEntity } from './lifecycle/operations-notification.entity';

/**
 * The tables DeliveryModule reads and writes; the composition root adds them to the connection.
 * `webhooks` is the endpoints' storage (destinations, secrets, last_*), shared with the webhook API;
 * `destination_circuits` the circuit breaker's state (DestinationCircuitStore);
 * `operations_notifications` the operators' webhook.disabled notifications (OperationsNotificationStore).
 */
export const DELIVERY_ENTITIES = [EndpointEntity, EventEntity, DeliveryEntity, AttemptEntity, DestinationCircuitEntity, OperationsNotificationEntity];
