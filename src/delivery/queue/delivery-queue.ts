import type { PageRequest } from '../../pagination/page';
import type { AttemptEntity } from '../attempt.entity';
import type { DeliveryEntity } from '../delivery.entity';
import type {
  AttemptRecord,
  ClaimedDelivery,
  ClaimedWork,
  ClaimRequest,
  DeliveryFilter,
  EventRow,
  EventSubscription,
  NewEvent,
  QueueActivityRows,
  QueueStats,
  RecordInput,
  RecordResult,
  RecoverOptions,
  RecoverResult,
  RecoverScope,
  Subscriber,
  WebhookHealthCounts,
} from './types';

/**
 * The delivery queue lives in SQL (graphile-worker style), one implementation per database
 * (chosen by `dialectProvider`). Deliveries are leased to a worker (`owner`) until a time; a row
 * whose lease expired (its worker died) is due again by construction, since next_attempt_at holds
 * the lease expiry. Every write of an attempt's outcome is fenced on the lease.
 */
export abstract class DeliveryQueue {
  /**
   * Writes the event and one delivery per subscriber (the outbox), unless the event already
   * exists; settles once every delivery is written. PostgreSQL writes them in one transaction;
   * SQLite in short transactions that let the event loop run between them, and the replay of an
   * event whose fan-out a crash cut short writes the missing deliveries. Returns how many
   * deliveries were created (0 for a replayed event whose fan-out was complete).
   * `targeted`: the endpoints the subscription source answered (or the one a test event is for),
   * oldest first; one that is disabled or gone gets no delivery. `idFor` must be `deliveryId(event.id, webhookId)`: the primary
   * key on that derived id is what keeps one event from reaching a webhook twice (there is no
   * other unique index on deliveries).
   *
   * `lease` (optional; a queue may ignore it): lease up to `lease.limit` of the new deliveries to
   * `lease.owner` in the same write, charged an attempt as a claim would, and answer them as
   * `claimed`: the emitting process's own worker sends them without a claim of its own. The others
   * stay pending for any worker.
   */
  abstract insertEventWithDeliveries(
    event: NewEvent,
    targeted: readonly Subscriber[],
    idFor: (webhookId: string) => string,
    now: Date,
    lease?: ClaimRequest,
  ): Promise<{ created: boolean; deliveries: number; claimed?: ClaimedWork[] }>;

  /**
   * Whether an event with this id is stored with every delivery of its fan-out, so that emitting it
   * again has nothing to do and need not ask the subscription source. PostgreSQL writes an event
   * and its deliveries in one statement: a stored event is complete. SQLite writes a large fan-out
   * in slices and can tell only an event that got no delivery; otherwise it answers false and the
   * replay finds out (insertEventWithDeliveries).
   */
  abstract replayIsComplete(eventId: string): Promise<boolean>;

  /**
   * Leases up to `limit` due deliveries to `owner` until `leaseUntil`, with what sending them
   * needs, charging each an attempt. Pending rows of `skipCustomers` (customers that already hold
   * their share of the worker's slots) are passed over among the first CLAIM_SKIP_WINDOW due rows;
   * their leases that expired are still taken over.
   */
  abstract claimDue(owner: string, now: Date, leaseUntil: Date, limit: number, skipCustomers?: readonly string[]): Promise<ClaimedWork[]>;

  /**
   * Who is using the queue now, for the workers' fair share (WorkerSlots): the customers among
   * the first `window` pending deliveries in due order, and the live leases (state delivering,
   * lease not expired) counted per customer and owner. Cheap at any backlog: both are ranges of
   * idx_deliveries_due, the second bounded by the slots of all workers.
   */
  abstract activity(now: Date, window: number): Promise<QueueActivityRows>;

  /**
   * Records a batch of attempts (at most RECORD_BATCH_MAX) in one transaction and moves each
   * delivery on, fenced on the lease: when another worker took the row over (this one stalled
   * past its lease), the attempt is still logged but the state is left to the new owner. Each
   * held outcome's webhook gets its latest outcome (WebhookDeliveryStatus). When `claim` is
   * given, further deliveries are claimed in the same transaction: the worker refills the slots
   * these outcomes free without another round trip.
   */
  abstract recordAttempts(inputs: RecordInput[], claim?: ClaimRequest): Promise<RecordResult>;

  /**
   * A live worker's heartbeat: extends to `leaseUntil` the leases `owner` still holds among `ids`
   * (the deliveries it is sending or recording), in one statement. A row another worker took
   * over, or whose outcome was recorded, is not touched. Answers the ids renewed; a held row may
   * be missing when it was busy at that instant (PostgreSQL skips locked rows), and the next
   * renewal takes it.
   */
  abstract renewLeases(owner: string, ids: string[], leaseUntil: Date): Promise<string[]>;

  /** Logs one attempt row without touching the delivery (an attempt lost with its worker). */
  abstract logAttempt(deliveryId: string, a: AttemptRecord['attempt']): Promise<void>;

  /**
   * The claimed delivery's webhook is gone or disabled: stop it without an attempt (the claim's
   * charge is given back). `lastError`, when given, says why (WEBHOOK_DISABLED).
   */
  abstract cancelClaimed(d: ClaimedDelivery, owner: string, now: Date, lastError?: string): Promise<void>;

  /**
   * The webhook was disabled by trendhooks (or deleted): its pending and held deliveries end
   * `cancelled` with `lastError`, never attempted (those being sent finish their attempt; their
   * retries are cancelled when claimed). Answers how many.
   */
  abstract cancelPendingForWebhook(webhookId: string, now: Date, lastError: string): Promise<number>;

  /**
   * The webhook was paused by hand: its pending deliveries become `held` (never claimed) with their
   * schedule cleared, until releaseHeldForWebhook. Those being sent finish their attempt; a retry
   * they schedule is held when claimed (holdClaimed). Answers how many.
   */
  abstract holdPendingForWebhook(webhookId: string, now: Date): Promise<number>;

  /**
   * The claimed delivery's webhook is disabled: when it is paused by hand (now, not as the claim
   * read it), the delivery is held without an attempt (the claim's charge given back) and this
   * answers true; otherwise it is left to cancelClaimed.
   */
  abstract holdClaimed(d: ClaimedDelivery, owner: string, now: Date): Promise<boolean>;

  /**
   * The webhook was resumed: its held deliveries created at or after `keepSince` are pending
   * again, due at once in the order they were created (due times just before `now`, as recover's);
   * older ones end `cancelled` with `expiredError`. Answers how many of each.
   */
  abstract releaseHeldForWebhook(webhookId: string, now: Date, keepSince: Date, expiredError: string): Promise<{ released: number; expired: number }>;

  /**
   * Gives up the leases of a stopping worker so others pick its rows up at once. `unstarted`
   * rows (claimed, never sent) go back to pending with the claim's charge given back. Rows whose
   * attempt is still `in_flight` stay charged and leased, the lease ending now: the next claim
   * takes them over as an attempt whose outcome was lost (see the worker), as if this worker had died.
   * `dueAt` (unstarted rows only): when they are due again, `now` by default; a worker that gives
   * back rows of a destination already at its share of slots puts them off a little.
   */
  abstract releaseLeases(owner: string, ids: string[], now: Date, what: 'unstarted' | 'in_flight', dueAt?: Date): Promise<void>;

  /**
   * Deliveries a worker gave back unstarted until `putOffUntil` (behind a half-open circuit's probe)
   * are due `now` instead: the probe answered. Only rows still pending and due after `now` but not
   * after `putOffUntil` move; one claimed, finished, or put off further since is left alone. Answers
   * how many moved.
   */
  abstract bringForward(ids: readonly string[], putOffUntil: Date, now: Date): Promise<number>;

  /**
   * Whether the webhook still exists and is not disabled, asked right before a send: a DELETE
   * (or a pause) answered before this call is seen, so no attempt starts after it.
   */
  abstract webhookExists(webhookId: string): Promise<boolean>;

  /**
   * A webhook's deliveries, newest first, keyset over (created_at, id); `limit + 1` rows at most.
   * `filter` narrows them to one state and to creation times in [since, until): the time bounds
   * narrow the range scan of idx_deliveries_webhook_created, the state is checked on the rows it reads.
   */
  abstract pageForWebhook(webhookId: string, req: PageRequest, filter?: DeliveryFilter): Promise<DeliveryEntity[]>;

  /**
   * Health counts of these webhooks (one query for all of them) over the attempts of their
   * deliveries created at or after `since`; a webhook without such attempts is absent from the map.
   */
  abstract healthOf(webhookIds: readonly string[], since: Date): Promise<Map<string, WebhookHealthCounts>>;

  abstract findForWebhook(webhookId: string, id: string): Promise<DeliveryEntity | null>;

  /** The attempts of these deliveries, by delivery, then in the order they started (attempt number on a tie). */
  abstract attemptsFor(deliveryIds: string[]): Promise<AttemptEntity[]>;

  /** Manual retry: due now, same id; a delivery in flight is left alone. Whether it was requeued. */
  abstract requeue(id: string, now: Date): Promise<boolean>;

  /**
   * Catch-up after an outage: queues once, oldest first, every event of the scope's subscription
   * created in [since, until) that did not end delivered to this webhook. A failed or cancelled
   * delivery goes back to pending under its own id (attempts reset, its attempt log kept); an
   * event without a delivery row (created since the webhook was) gets one, with the id
   * `deliveryId(event, webhook)` a fan-out would have given it. Rows pending or delivering are
   * left alone, so a second call queues nothing twice, and what was delivered stays delivered.
   * Due times follow the events' order. The events are walked in batches (keyset over
   * idx_events_type_subreddit_created), never all loaded; at most `maxEvents` per call.
   */
  abstract recover(scope: RecoverScope, now: Date, opts: RecoverOptions): Promise<RecoverResult>;

  /**
   * The events history: the events of these subscriptions (each from its `from` on, and from
   * `since` when given), newest first, keyset over (created_at, id); `limit + 1` rows at most.
   * Each subscription is one range of idx_events_type_subreddit_created read at most `limit + 1`
   * rows deep, so a page costs the same at any depth.
   */
  abstract eventsPage(subscriptions: readonly EventSubscription[], req: PageRequest, since?: Date): Promise<EventRow[]>;

  /** Queue depth and the age of the oldest due delivery, for metrics and benchmarks. */
  abstract queueStats(now: Date): Promise<QueueStats>;
}
