/** The delivery module's import of the webhooks store, until it names WebhookStore itself; no other code imports this. */
export { WebhookStore as WebhookRepository } from './webhook.store';
