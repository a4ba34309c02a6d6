import { WebhookSubscriptions1795869825819 } from './1795869825819-WebhookSubscriptions';

/** WebhookSubscriptions1795869825819 for a host's own migrations table (the core feature): the same statements, its own name. */
export class TrendhooksWebhookSubscriptions1796000000009 extends WebhookSubscriptions1795869825819 {
  override name = 'TrendhooksWebhookSubscriptions1796000000009';
}
