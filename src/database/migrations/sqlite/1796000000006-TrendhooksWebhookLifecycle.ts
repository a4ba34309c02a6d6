import { WebhookLifecycle1795857416654 } from './1795857416654-WebhookLifecycle';

/** WebhookLifecycle1795857416654 for a host's own migrations table (the core feature): the same statements, its own name. */
export class TrendhooksWebhookLifecycle1796000000006 extends WebhookLifecycle1795857416654 {
  override name = 'TrendhooksWebhookLifecycle1796000000006';
}
