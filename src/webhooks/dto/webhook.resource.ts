import { ApiProperty, ApiSchema } from '../../openapi/swagger';
import { isoString } from '../../common/iso-time';
import { circuitView, type CircuitRow, type CircuitState } from '../../delivery/circuit/circuit-policy';
import type { WebhookHealthCounts } from '../../delivery/queue/types';
import { EVENT_KINDS, EventKind } from '../../events/catalogue';
import { SOURCE_STATUSES, SourceStatus } from '../source-status';
import { DISABLED_REASONS, type DisabledReason, WebhookLastStatus } from '../../delivery/endpoint.entity';
import type { WebhookListItem } from '../webhook.store';

/** The circuit breaker of the webhook's destination, for its owner (src/delivery/README.md). */
@ApiSchema({
  name: 'WebhookCircuit',
  description:
    "The circuit breaker of this customer's deliveries to the webhook's host and port (shared by the customer's webhooks there, never by another customer's). Only attempts that got no answer (timeouts, refused or reset connections, DNS or TLS failures) count; any HTTP answer closes it.",
})
export class WebhookCircuitResource {
  @ApiProperty({
    enum: ['closed', 'throttled', 'open', 'half_open'],
    description:
      '`closed`: normal. `throttled`: after failures in a row, few attempts at once. `open`: deliveries are put off until `until`, without using attempts. `half_open`: one probe is on its way; its answer closes the circuit, its failure opens it again for twice as long.',
  })
  state: CircuitState;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: '`open`: when the pause ends; `half_open`: when the probe times out; else null.' })
  until: string | null;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Attempts in a row that got no answer.' })
  consecutive_failures: number;
}

/** The recover a resumed webhook is offered: `POST …/recover` with `since` and `until` sends what the dry run counted. */
@ApiSchema({ name: 'WebhookRecoverOffer', description: 'What the webhook missed while disabled, counted by a recover dry run over [`since`, `until`).' })
export class RecoverOfferResource {
  @ApiProperty({
    format: 'date-time',
    description:
      'When it was paused by hand; after an automatic disable, two days earlier (the deliveries it cancelled were created since); never before the webhook, nor more than 14 days ago.',
  })
  since: string;

  @ApiProperty({ format: 'date-time', description: 'When it was resumed.' })
  until: string;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    nullable: true,
    description: 'What `POST …/recover` with this range would queue (a dry run). Null when the recover budget refused the dry run (`RATE_LIMITED`): count it later.',
  })
  queued: number | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: "As recover's: where the dry run stopped after 10,000 events; null when it covered the range." })
  next_since: string | null;
}

/** What resuming a disabled webhook did (in the answer of that `PATCH` only). */
@ApiSchema({ name: 'WebhookResumed', description: 'What resuming the webhook did to its deliveries.' })
export class ResumedResource {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Held deliveries (a pause by hand) now `pending`, due at once, oldest first.' })
  released: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Held deliveries created more than 14 days ago: `cancelled` with `last_error` `hold_expired` instead (recover sends them).' })
  expired: number;

  @ApiProperty({ type: RecoverOfferResource, nullable: true, description: 'The recover it is offered; null when the range is empty.' })
  recover: RecoverOfferResource | null;
}

/** The client's view of a webhook (spec 2.1). `secret` only on create and rotate. */
@ApiSchema({ name: 'Webhook', description: 'A webhook subscription. Its secret is never shown here, only on create and rotate.' })
export class WebhookResource {
  @ApiProperty({ description: 'ULID, time-ordered.', example: '01J9Z6K3W4Q8X2V7N5M1B0C9D8' })
  id: string;

  @ApiProperty({ format: 'uri', maxLength: 2048, description: 'Absolute https URL the events are POSTed to.', example: 'https://example.com/hooks/trendhooks' })
  url: string;

  @ApiProperty({ enum: EVENT_KINDS, enumName: 'WebhookEvent' })
  event: EventKind;

  @ApiProperty({ description: 'Lower case, without the r/ prefix.', example: 'typescript' })
  subreddit: string;

  @ApiProperty({ description: 'Whether a port other than 443 is allowed.' })
  allow_nonstandard_port: boolean;

  @ApiProperty({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds.' })
  created_at: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'Time of the last delivery attempt.' })
  last_delivery_at: string | null;

  @ApiProperty({
    type: 'string',
    enum: ['delivered', 'retrying', 'failed'],
    nullable: true,
    description: '`delivered`: the last delivery got a 2xx; `retrying`: its last attempt failed transiently; `failed`: failed for good. Null before the first.',
  })
  last_status: WebhookLastStatus | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'HTTP status of the last attempt, if it got one.' })
  last_response_code: number | null;

  @ApiProperty({
    type: 'number',
    minimum: 0,
    maximum: 1,
    nullable: true,
    description:
      'Delivered attempts divided by all finished attempts (delivered or failed, transiently or for good), counted over the attempts of this webhook\'s deliveries created in the last 24 hours; ' +
      'null when they have none yet. Retries of older deliveries do not count. Rounded to 4 decimals.',
    example: 0.9875,
  })
  success_rate_24h: number | null;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description:
      'Failed attempts (any failure, transient or permanent) since the newest delivered attempt, across the deliveries counted by `success_rate_24h` (all of their failures when none was delivered); 0 after a success. ' +
      'Unlike `circuit.consecutive_failures`, HTTP error answers count too.',
  })
  consecutive_failures: number;

  @ApiProperty({ type: WebhookCircuitResource })
  circuit: WebhookCircuitResource;

  @ApiProperty({
    type: 'string',
    enum: SOURCE_STATUSES,
    nullable: true,
    description:
      'Whether trendhooks can read the subreddit from Reddit (as `GET /v1/subreddits/{subreddit}` says): `ok`, `pending` (not read yet), `private`, `quarantined`, `banned`, `not_found`, ' +
      '`throttled` or `error` (the last read failed; retried). Anything but `ok` and `pending` means no events come for now. Null where the server runs without the trends feature.',
  })
  source_status: SourceStatus | null;

  @ApiProperty({
    description:
      'Whether the webhook is disabled: it gets no deliveries (its events are still recorded; `disabled_deliveries` says what became of the pending ones). ' +
      '`PATCH` with `{"disabled": false}` resumes it.',
  })
  disabled: boolean;

  @ApiProperty({
    type: 'string',
    enum: ['held', 'cancelled'],
    nullable: true,
    description:
      'While disabled, what became of its pending deliveries: `held` (paused by hand: they stay, state `held`, and resuming sends them) or `cancelled` (disabled by trendhooks, `gone` or `failing`: ' +
      'state `cancelled`, `last_error` `webhook_disabled`; resuming offers to recover them). Null while enabled.',
  })
  disabled_deliveries: 'held' | 'cancelled' | null;

  @ApiProperty({
    type: 'string',
    enum: DISABLED_REASONS,
    nullable: true,
    description:
      'Why it is disabled: `manual` (paused with `PATCH`), `gone` (the receiver answered `410 Gone`) or `failing` (every attempt failed for `WEBHOOK_DISABLE_AFTER`, 5 days by default, ' +
      'with failures spread over at least 3 fifths of that time); null while enabled.',
  })
  disabled_reason: DisabledReason | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When it was disabled; null while enabled.' })
  disabled_at: string | null;

  @ApiProperty({
    type: ResumedResource,
    nullable: true,
    description: 'Only in the answer of the `PATCH` that resumed it (`{"disabled": false}` while disabled): what resuming did, and the recover it is offered. Null otherwise.',
  })
  resumed: ResumedResource | null;

  // Not documented here: only WebhookWithSecretResource (create, rotate) carries it.
  secret?: string;
}

/** The create and rotate answers: the one time the signing secret is shown. */
@ApiSchema({ name: 'WebhookWithSecret', description: 'A webhook with its signing secret, shown only in this answer.' })
export class WebhookWithSecretResource extends WebhookResource {
  @ApiProperty({ required: true, pattern: '^whsec_[A-Za-z0-9+/]{43}=$', description: 'Standard Webhooks signing secret; store it now, it is not shown again.' })
  override secret: string;
}

/**
 * `secret`: the clear secret, given only by create and rotate (the entity holds it encrypted);
 * `health`: counts over its deliveries of the last 24 h (DeliveryQueue.healthOf; none: no attempts);
 * `circuit`: the customer's circuit for the webhook's destination (none: closed);
 * `sourceStatus`: the subreddit's, when trends runs (null otherwise);
 * `resumed`: what the PATCH that resumed it did (WebhookPause).
 */
export function toWebhookResource(
  w: WebhookListItem,
  opts: { secret?: string; health?: WebhookHealthCounts | null; circuit?: CircuitRow | null; sourceStatus?: SourceStatus | null; resumed?: ResumedResource } = {},
): WebhookResource {
  const c = circuitView(opts.circuit ?? null);
  const out: WebhookResource = {
    id: w.id,
    url: w.url,
    event: w.event,
    subreddit: w.subreddit,
    allow_nonstandard_port: w.allowNonstandardPort,
    created_at: isoString(w.createdAt),
    last_delivery_at: w.lastDeliveryAt ? isoString(w.lastDeliveryAt) : null,
    last_status: w.lastStatus,
    last_response_code: w.lastResponseCode,
    success_rate_24h: opts.health && opts.health.attempts > 0 ? Math.round((opts.health.delivered / opts.health.attempts) * 10_000) / 10_000 : null,
    consecutive_failures: opts.health?.failingSinceDelivered ?? 0,
    circuit: { state: c.state, until: c.until ? isoString(c.until) : null, consecutive_failures: c.consecutiveFailures },
    source_status: opts.sourceStatus ?? null,
    disabled: w.disabledAt !== null,
    disabled_reason: w.disabledAt === null ? null : w.disabledReason,
    disabled_at: w.disabledAt ? isoString(w.disabledAt) : null,
    disabled_deliveries: w.disabledAt === null ? null : w.disabledReason === 'manual' ? 'held' : 'cancelled',
    resumed: opts.resumed ?? null,
  };
  if (opts.secret !== undefined) out.secret = opts.secret;
  return out;
}
