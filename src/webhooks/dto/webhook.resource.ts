import type { WebhookEntity, WebhookEvent, WebhookLastStatus } from '../webhook.entity';

/** The client's view of a webhook (spec 2.1). `secret` only on create and rotate. */
export interface WebhookResource {
  id: string;
  url: string;
  event: WebhookEvent;
  subreddit: string;
  allow_nonstandard_port: boolean;
  created_at: string;
  last_delivery_at: string | null;
  last_status: WebhookLastStatus | null;
  last_response_code: number | null;
  secret?: string;
}

export function toWebhookResource(w: WebhookEntity, opts: { withSecret?: boolean } = {}): WebhookResource {
  const out: WebhookResource = {
    id: w.id,
    url: w.url,
    event: w.event,
    subreddit: w.subreddit,
    allow_nonstandard_port: w.allowNonstandardPort,
    created_at: w.createdAt.toISOString(),
    last_delivery_at: w.lastDeliveryAt ? w.lastDeliveryAt.toISOString() : null,
    last_status: w.lastStatus,
    last_response_code: w.lastResponseCode,
  };
  if (opts.withSecret) out.secret = w.secret;
  return out;
}
