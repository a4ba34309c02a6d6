import { WebhookEntity } from '../delivery/webhook.entity';

/** The tables WebhooksModule reads and writes; the composition root adds them to the connection. */
export const WEBHOOK_ENTITIES = [WebhookEntity];
