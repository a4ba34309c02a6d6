import type { AttemptEntity } from '../attempt.entity';
import type { DeliveryState } from '../delivery.entity';

/** What the worker needs of a claimed row. */
export interface ClaimedDelivery {
  id: string;
  eventId: string;
  webhookId: string;
  /**
   * Attempts charged so far, this claim's included: the claim itself counts the attempt, so a
   * delivery whose attempts keep killing their worker still runs out of attempts.
   */
  attempts: number;
  /**
   * Set when this claim took the row over from a worker whose lease expired: when that worker
   * claimed it (the start of an attempt whose outcome was never recorded).
   */
  lostSince: Date | null;
}

/** The webhook fields an attempt needs, read with the claim. */
export interface ClaimedWebhook {
  id: string;
  /** The owner: the attempt's DNS lookup counts against this customer's bound. */
  customerId: string;
  url: string;
  allowNonstandardPort: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  /** Disabled (paused or auto-disabled): the worker cancels the delivery without an attempt. */
  disabled: boolean;
}

/**
 * A claimed delivery with its webhook and event, read in the same statement (PostgreSQL) or
 * transaction (SQLite) as the claim. `webhook` is null when it was deleted, `event` when the
 * event row is gone: the worker cancels such a delivery without an attempt.
 */
export interface ClaimedWork extends ClaimedDelivery {
  webhook: ClaimedWebhook | null;
  event: { id: string; type: string; subreddit: string; payload: string; createdAt: Date } | null;
}

export interface NewEvent {
  id: string;
  type: string;
  subreddit: string;
  payload: string;
  createdAt: Date;
}

export interface Subscriber {
  id: string;
  customerId: string;
}

/** How one attempt ended, as written back under the lease. */
export interface AttemptRecord {
  attempt: Omit<AttemptEntity, 'id' | 'deliveryId'>;
  state: Extract<DeliveryState, 'pending' | 'delivered' | 'failed'>;
  nextAttemptAt: Date | null;
  lastError: string | null;
  webhookStatus: 'delivered' | 'retrying' | 'failed';
}

/** One attempt's outcome, for recordAttempts. */
export interface RecordInput {
  d: ClaimedDelivery;
  owner: string;
  rec: AttemptRecord;
  now: Date;
}

/** A claim of up to `limit` due deliveries, leased to `owner` until `leaseUntil`. */
export interface ClaimRequest {
  owner: string;
  now: Date;
  leaseUntil: Date;
  limit: number;
}

/**
 * How many due rows, in due order, a claim that skips customers (claimDue's `skipCustomers`)
 * looks through for others' rows: it bounds what such a claim reads when the skipped customers
 * have a long backlog. Another customer's row behind more than this many of theirs waits until
 * their backlog shrinks below it.
 */
export const CLAIM_SKIP_WINDOW = 2048;

/** What recordAttempts answers: `held[i]` is about `inputs[i]`; `claimed` is the claim that rode along. */
export interface RecordResult {
  held: boolean[];
  claimed: ClaimedWork[];
}

/** Queue depth and the age of the oldest due delivery. */
export interface QueueStats {
  due: number;
  oldestDueMs: number | null;
}

// Per batch of recordAttempts: PostgreSQL's 65,535 bind parameters are not the limit (arrays are
// one parameter each); this just bounds one transaction's size.
export const RECORD_BATCH_MAX = 256;

/** The delivery log's filters (all optional): one state, and a half-open range [since, until) of creation times. */
export interface DeliveryFilter {
  state?: DeliveryState;
  since?: Date;
  until?: Date;
}

/**
 * A webhook's health over the attempts of its deliveries created since a time (the last 24 h):
 * `attempts` finished attempts, `delivered` of them got a 2xx, and `failingSinceDelivered` failed
 * after the newest delivered one (all failures when none was delivered).
 */
export interface WebhookHealthCounts {
  attempts: number;
  delivered: number;
  failingSinceDelivered: number;
}

/**
 * What recover looks at: one webhook's subscription (its event kind and subreddit) over a
 * half-open range [since, until) of event creation times. The caller (the webhooks API, which
 * owns subscriptions) passes the subscription in, so the queue reads no subscription of its own.
 */
export interface RecoverScope {
  webhookId: string;
  customerId: string;
  type: string;
  subreddit: string;
  /**
   * When the webhook was created: the walk starts there when `since` is earlier. An event stamped
   * before it is not looked at, even if it has a delivery of this webhook (fanned out after the
   * webhook was created); POST …/retry resends such a delivery.
   */
  subscribedAt: Date;
  since: Date;
  until: Date;
}

export interface RecoverOptions {
  /** Only count what would be queued. */
  dryRun: boolean;
  /** Rows looked at per call, at most (test events among them); the walk stops there and answers where to go on. */
  maxEvents: number;
}

export interface RecoverResult {
  /** Deliveries queued (or, dry run, that would be): re-queued rows and new ones. */
  queued: number;
  /**
   * Creation time of the first row not looked at when `maxEvents` stopped the walk (never before
   * the subscription); null when the range was covered.
   */
  nextSince: Date | null;
  /** Rows of the events table the walk read: its cost, charged to the customer's budget. */
  read: number;
}

/** One subscription of a customer, as the events history reads it: its events from `from` on. */
export interface EventSubscription {
  type: string;
  subreddit: string;
  from: Date;
}

/** An event as the history shows it. */
export interface EventRow {
  id: string;
  type: string;
  subreddit: string;
  payload: string;
  createdAt: Date;
}

/** What DeliveryQueue.activity answers. */
export interface QueueActivityRows {
  /** Distinct customers among the first `window` due pending deliveries. */
  dueCustomers: string[];
  /** Live leases per customer and lease owner. */
  leased: { customer: string; owner: string; n: number }[];
}

/** How many due rows `activity` looks through for customers waiting. */
export const ACTIVITY_WINDOW = 512;
