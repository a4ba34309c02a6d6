import type { ClaimedWebhook, ClaimedWork } from './types';

/** A claimed row as either database answers it (PostgreSQL: bigints as strings, SQLite: booleans as 0/1). */
export type ClaimRow = {
  id: string;
  event_id: string;
  webhook_id: string;
  attempts: number | string;
  lost_since?: number | string | null;
  url: string | null;
  customer_id: string | null;
  allow_nonstandard_port: boolean | number | null;
  secret: string | null;
  previous_secret: string | null;
  previous_secret_expires_at: number | string | null;
  disabled_at?: number | string | null;
  event_type: string | null;
  event_subreddit: string | null;
  event_payload: string | null;
  event_created_at: number | string | null;
};

const num = (v: number | string | null): number | null => (v == null ? null : Number(v));

export function toClaimed(r: ClaimRow): ClaimedWork {
  const lost = num(r.lost_since ?? null);
  return {
    id: r.id,
    eventId: r.event_id,
    webhookId: r.webhook_id,
    attempts: Number(r.attempts),
    lostSince: lost === null ? null : new Date(lost),
    webhook: toWebhook(r.webhook_id, r),
    event: toEvent(r.event_id, r),
  };
}

/** null: the webhook is gone (a LEFT JOIN that found nothing, or no row on SQLite). */
export function toWebhook(id: string, r: Partial<ClaimRow> | undefined): ClaimedWebhook | null {
  if (r?.url == null || r.secret == null) return null;
  const expires = num(r.previous_secret_expires_at ?? null);
  return {
    id,
    url: r.url,
    customerId: r.customer_id ?? '',
    allowNonstandardPort: r.allow_nonstandard_port === true || r.allow_nonstandard_port === 1,
    secret: r.secret,
    previousSecret: r.previous_secret ?? null,
    previousSecretExpiresAt: expires == null ? null : new Date(expires),
    disabled: r.disabled_at != null,
  };
}

export function toEvent(id: string, r: Partial<ClaimRow> | undefined): ClaimedWork['event'] {
  const createdAt = num(r?.event_created_at ?? null);
  if (r?.event_type == null || r.event_payload == null || createdAt == null) return null;
  return { id, type: r.event_type, subreddit: r.event_subreddit ?? '', payload: r.event_payload, createdAt: new Date(createdAt) };
}
