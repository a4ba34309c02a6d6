import { ASYNC_COMMIT_CTE } from './async-commit';
import type { PreparedStatement } from './statement';

/**
 * The claim, as CTEs: lease up to `limit` due rows by two ordered index range scans (pending;
 * delivering with an expired lease — FOR UPDATE cannot sit in a UNION, hence two), then the
 * final SELECT joins each leased row's webhook and event. Expired leases go first, whatever
 * their due times: a dead worker's deliveries are resent within a lease of its death, not after
 * the backlog. `$owner` … are placeholders filled with the statement's parameter numbers;
 * `exclude` keeps rows out (those whose outcome the same statement writes: one statement must
 * not update a row twice).
 */
export function claimCtes(p: { owner: string; leaseUntil: string; now: string; limit: string; exclude?: string; skip?: { customers: string; window: string } }): string {
  // Pending rows of `skip.customers` (customers already at their share of the worker's slots) are
  // passed over among the first `skip.window` due rows (see ClaimRequest.skipCustomers).
  const skip = p.skip
    ? `
        AND id IN (SELECT id FROM deliveries WHERE state = 'pending' AND next_attempt_at <= ${p.now} ORDER BY next_attempt_at LIMIT ${p.skip.window})
        AND NOT (customer_id = ANY(${p.skip.customers}))`
    : '';
  return `pending AS (
      SELECT id, next_attempt_at, NULL::bigint AS lost_since FROM deliveries WHERE state = 'pending' AND next_attempt_at <= ${p.now}${skip}
      ORDER BY next_attempt_at LIMIT ${p.limit} FOR UPDATE SKIP LOCKED),
    expired AS (
      SELECT id, next_attempt_at, updated_at AS lost_since FROM deliveries WHERE state = 'delivering' AND next_attempt_at <= ${p.now}${p.exclude ? ` AND NOT (id = ANY(${p.exclude}))` : ''}
      ORDER BY next_attempt_at LIMIT ${p.limit} FOR UPDATE SKIP LOCKED),
    pick AS (SELECT id, lost_since FROM (SELECT * FROM pending UNION ALL SELECT * FROM expired) due, async_commit ORDER BY lost_since IS NULL, next_attempt_at LIMIT ${p.limit}),
    claimed AS (
      UPDATE deliveries d SET state = 'delivering', attempts = d.attempts + 1, lease_owner = ${p.owner}, next_attempt_at = ${p.leaseUntil}, updated_at = ${p.now}
      FROM pick WHERE d.id = pick.id
      RETURNING d.id, d.event_id, d.webhook_id, d.attempts, pick.lost_since)`;
}

/** What a claim answers per row: the lease, and the webhook and event sending needs. */
export const CLAIMED_COLUMNS = `c.id, c.event_id, c.webhook_id, c.attempts, c.lost_since,
    w.url, w.customer_id, w.allow_nonstandard_port, w.secret, w.previous_secret, w.previous_secret_expires_at, w.disabled_at,
    e.type AS event_type, e.subreddit AS event_subreddit, e.payload AS event_payload, e.created_at AS event_created_at
  FROM claimed c LEFT JOIN webhooks w ON w.id = c.webhook_id LEFT JOIN events e ON e.id = c.event_id`;

/** $1 owner, $2 lease until (ms), $3 now (ms), $4 limit. One round trip: the lease and what sending needs. */
export const CLAIM: PreparedStatement = {
  name: 'trendhooks_claim',
  text: `WITH ${ASYNC_COMMIT_CTE}, ${claimCtes({ owner: '$1', leaseUntil: '$2', now: '$3', limit: '$4' })}
  SELECT ${CLAIMED_COLUMNS}`,
};

/** CLAIM passing over the pending rows of $5 (customers, an array) among the first $6 due rows. */
export const CLAIM_SKIPPING: PreparedStatement = {
  name: 'trendhooks_claim_skipping',
  text: `WITH ${ASYNC_COMMIT_CTE}, ${claimCtes({ owner: '$1', leaseUntil: '$2', now: '$3', limit: '$4', skip: { customers: '$5::varchar[]', window: '$6::int' } })}
  SELECT ${CLAIMED_COLUMNS}`,
};
