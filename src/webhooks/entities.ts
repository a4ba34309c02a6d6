import { WebhookSubscriptionEntity } from './subscription.entity';

/**
 * The tables WebhooksModule owns; the composition root adds them to the connection. A webhook's
 * endpoint (`webhooks`) is the delivery core's (DELIVERY_ENTITIES), asked through EndpointStore.
 */
export const WEBHOOK_ENTITIES = [WebhookSubscriptionEntity];
