import type { AttemptEntity } from './attempt.entity';
import type { DeliveryEntity } from './delivery.entity';

export interface AttemptResource {
  attempt: number;
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  outcome: string;
  error_class: string | null;
  response_excerpt: string | null;
}

/** A delivery as its webhook's owner sees it: state, schedule and every attempt. */
export interface DeliveryResource {
  id: string;
  event_id: string;
  webhook_id: string;
  state: DeliveryEntity['state'];
  attempt_count: number;
  next_attempt_at: string | null;
  last_error: string | null;
  last_response_code: number | null;
  created_at: string;
  delivered_at: string | null;
  attempts: AttemptResource[];
}

export function toDeliveryResource(d: DeliveryEntity, attempts: AttemptEntity[]): DeliveryResource {
  return {
    id: d.id,
    event_id: d.eventId,
    webhook_id: d.webhookId,
    state: d.state,
    attempt_count: d.attempts,
    // While delivering, next_attempt_at is the lease expiry — not a schedule worth showing.
    next_attempt_at: d.state === 'pending' && d.nextAttemptAt ? d.nextAttemptAt.toISOString() : null,
    last_error: d.lastError,
    last_response_code: d.lastResponseCode,
    created_at: d.createdAt.toISOString(),
    delivered_at: d.deliveredAt ? d.deliveredAt.toISOString() : null,
    attempts: attempts.map((a) => ({
      attempt: a.attemptNo,
      started_at: a.startedAt.toISOString(),
      duration_ms: a.durationMs,
      status_code: a.statusCode,
      outcome: a.outcome,
      error_class: a.errorClass,
      response_excerpt: a.responseExcerpt,
    })),
  };
}
