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
  /** Claim fairly (see FairClaim); without it, the plain claim in due order. */
  fair?: FairClaim;
}

/**
 * A fair claim: among the first CLAIM_SKIP_WINDOW due pending rows, each customer's rows are
 * ranked in due order and the claim takes them rank by rank (round-robin between customers:
 * every customer's first row, then every customer's second, …), at most `allow` rows of a
 * customer listed there (0: passed over) and at most `share` of any other. Expired leases are
 * still taken first, whoever their customer.
 */
export interface FairClaim {
  share: number;
  allow: ReadonlyMap<string, number>;
}

/**
 * What the queue's customers look like, for the worker's share: `active` customers have a
 * delivery being sent (leased, any worker) or one among the first CLAIM_SKIP_WINDOW due pending
 * rows; `reach` is how many of those due rows, in due order, a claim must take to reach every
 * customer's first one (0 when none is due): above a claim's size, due order would make some
 * customer wait behind others' backlog.
 */
export interface ActiveCustomers {
  active: number;
  reach: number;
}

/**
 * How many due rows, in due order, a fair claim (FairClaim) and the count of active customers
 * look through: it bounds what they read when some customers have a long backlog. Another
 * customer's row behind more than this many of theirs waits until their backlog shrinks below it.
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
