import { WebhookLifecycle1795857417582 } from './1795857417582-WebhookLifecycle';

/** WebhookLifecycle1795857417582 for a host's own migrations table (the core feature): the same statements, its own name. */
export class TrendhooksWebhookLifecycle1796000000006 extends WebhookLifecycle1795857417582 {
  override name = 'TrendhooksWebhookLifecycle1796000000006';
}
