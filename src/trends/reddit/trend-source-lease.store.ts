import type { SourceRecord } from '../coverage';

/** A subreddit's row as a failed claim sees it: enough to tell when to try again. */
export interface SourceState {
  leaseOwner: string | null;
  leaseUntil: number | null;
  nextPollAt: number | null;
}

export type ClaimResult =
  /** lastPolledAt: when the last successful poll's listing started (epoch ms); a listing pages back to it. */
  | { claimed: true; consecutiveFailures: number; lastError: string | null; lastPolledAt: number | null }
  | { claimed: false; state: SourceState | null };

/** How a poll ended, written back under the lease. */
export interface PollOutcome {
  ok: boolean;
  /** On success: when the poll's listing started, recorded as last_polled_at (the next listing pages back to it). */
  listedAt?: number;
  nextPollAt: number;
  lastError: string | null;
  consecutiveFailures: number;
  /** On success: posts of the gap estimated past Reddit's listing cap, added to posts_unreachable. */
  unreachable?: number;
}

/**
 * The poller's store: leases on `trend_sources` and what its rows record. A lease is taken by one
 * conditional UPDATE, so two pollers on one database can never hold the same subreddit at once.
 * Only `trend_sources`: the tracked subreddits are asked of delivery's WebhookSubscriptions, posts
 * of PostStore. The injection token; the implementation for the database's dialect is chosen in
 * TrendsModule.
 */
export abstract class TrendSourceLeaseStore {
  /**
   * Leases `subreddit` to `owner` until `leaseUntil` when it is free and due, creating its row on
   * first sight. `strangerFrom`: another process's last poll keeps the subreddit for it until then
   * (its next_poll_at + a grace), so one pipeline's detectors keep seeing the subreddit while that
   * process lives.
   */
  abstract claim(subreddit: string, owner: string, now: number, leaseUntil: number, strangerFrom: number): Promise<ClaimResult>;

  /** Extends a held lease; false when it was lost (another process took the subreddit over). */
  abstract renew(subreddit: string, owner: string, leaseUntil: number, now: number): Promise<boolean>;

  /** Records the poll's outcome and releases the lease (the owner stays, as the last poller). False when the lease was lost. */
  abstract finish(subreddit: string, owner: string, o: PollOutcome, now: number): Promise<boolean>;

  /** A stopping poller gives up its leases and its claim to be the next poller, so others take over at once. */
  abstract releaseAll(owner: string, now: number): Promise<void>;

  /** What the rows of these subreddits record about their reads (absent: no row yet). */
  abstract sources(subreddits: readonly string[]): Promise<Map<string, SourceRecord>>;
}

/** A `trend_sources` row (lease_owner, lease_until, next_poll_at) as SourceState; either driver's BIGINT shape. */
export function sourceState(row: Record<string, unknown> | undefined): SourceState | null {
  if (!row) return null;
  return { leaseOwner: (row.lease_owner as string | null) ?? null, leaseUntil: num(row.lease_until), nextPollAt: num(row.next_poll_at) };
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** A `trend_sources` row (last_polled_at, last_error, consecutive_failures, next_poll_at, posts_unreachable) as a SourceRecord; either driver's BIGINT shape. */
export function sourceRecord(row: Record<string, unknown>): SourceRecord {
  return {
    lastPolledAt: num(row.last_polled_at),
    lastError: (row.last_error as string | null) ?? null,
    consecutiveFailures: Number(row.consecutive_failures ?? 0),
    nextPollAt: num(row.next_poll_at),
    postsUnreachable: Number(row.posts_unreachable ?? 0),
  };
}
