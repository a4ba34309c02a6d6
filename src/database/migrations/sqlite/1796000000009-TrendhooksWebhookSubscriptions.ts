import { WebhookSubscriptions1795869825259 } from './1795869825259-WebhookSubscriptions';

/** WebhookSubscriptions1795869825259 for a host's own migrations table (the core feature): the same statements, its own name. */
export class TrendhooksWebhookSubscriptions1796000000009 extends WebhookSubscriptions1795869825259 {
  override name = 'TrendhooksWebhookSubscriptions1796000000009';
}
