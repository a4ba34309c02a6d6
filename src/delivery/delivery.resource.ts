import { ApiProperty, ApiSchema } from '../openapi/swagger';
import type { AttemptEntity } from './attempt.entity';
import type { DeliveryEntity } from './delivery.entity';

/** The states a delivery shows (and `GET …/deliveries?state=` takes). */
export const DELIVERY_STATES = ['pending', 'delivering', 'delivered', 'failed', 'cancelled', 'held'] as const satisfies readonly DeliveryEntity['state'][];

@ApiSchema({ name: 'DeliveryAttempt', description: 'One try to deliver.' })
export class AttemptResource {
  @ApiProperty({ type: 'integer', minimum: 1 })
  attempt: number;

  @ApiProperty({ format: 'date-time' })
  started_at: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  duration_ms: number;

  @ApiProperty({ type: 'integer', nullable: true, description: "The receiver's HTTP status, if it answered." })
  status_code: number | null;

  @ApiProperty({ enum: ['delivered', 'transient', 'permanent'], description: '`transient` failures are retried; `permanent` ones are final.' })
  outcome: string;

  @ApiProperty({ type: 'string', nullable: true, description:
      'Failure class, e.g. `http_503`, `timeout`, `destination_blocked`; `worker_lost` when the worker died during the attempt; `secret_unreadable` (permanent, nothing sent) when the stored signing secret of the webhook could not be read: rotate it, then retry; `private_destination_error` for any failure before an HTTP status at an operator-allowed private destination.',
  })
  error_class: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: "The first 1 KiB of the receiver's answer; never kept for operator-allowed private destinations." })
  response_excerpt: string | null;
}

/** A delivery as its webhook's owner sees it: state, schedule and every attempt. */
@ApiSchema({ name: 'Delivery', description: 'One event for one webhook, with every attempt.' })
export class DeliveryResource {
  @ApiProperty({ description: 'The `webhook-id` header, identical on every retry.', example: 'msg_0123456789abcdefghjkmnpqrs' })
  id: string;

  @ApiProperty()
  event_id: string;

  @ApiProperty()
  webhook_id: string;

  @ApiProperty({
    enum: DELIVERY_STATES,
    description:
      '`held`: its webhook is paused (`PATCH` `{"disabled": true}`); it is not sent while paused, and resuming makes it `pending` again, due at once in the order the deliveries were created. ' +
      '`cancelled` with `last_error` `webhook_disabled`: trendhooks disabled the webhook (`gone`, `failing`); `recover` sends it again after resuming.',
  })
  state: DeliveryEntity['state'];

  @ApiProperty({ type: 'integer', minimum: 0 })
  attempt_count: number;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When the next attempt is due (pending only).' })
  next_attempt_at: string | null;

  @ApiProperty({ type: 'string', nullable: true })
  last_error: string | null;

  @ApiProperty({ type: 'integer', nullable: true })
  last_response_code: number | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  delivered_at: string | null;

  @ApiProperty({ type: AttemptResource, isArray: true })
  attempts: AttemptResource[];
}

/** The answer of `POST /v1/webhooks/{webhook_id}/test`. */
@ApiSchema({ name: 'TestDelivery', description: 'The test event and its delivery to this webhook.' })
export class TestDeliveryResource {
  @ApiProperty()
  event_id: string;

  @ApiProperty({ description: 'Follow it in the delivery log.' })
  delivery_id: string;
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
