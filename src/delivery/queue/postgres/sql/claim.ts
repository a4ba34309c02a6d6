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
export function claimCtes(p: {
  owner: string;
  leaseUntil: string;
  now: string;
  limit: string;
  exclude?: string;
  fair?: { window: string; share: string; customers: string; allow: string };
}): string {
  const expired = `SELECT id, next_attempt_at, updated_at AS lost_since${p.fair ? ', 0::bigint AS rn' : ''} FROM deliveries WHERE state = 'delivering' AND next_attempt_at <= ${p.now}${p.exclude ? ` AND NOT (id = ANY(${p.exclude}))` : ''}
      ORDER BY next_attempt_at LIMIT ${p.limit} FOR UPDATE SKIP LOCKED`;
  // A fair claim (see FairClaim): the first `window` due rows, each customer's ranked in due order
  // (rn), at most `allow`'s figure for `customers` (0: passed over) and `share` for any other,
  // taken rank by rank. FOR UPDATE cannot sit beside a window function: the ranking is a CTE of
  // its own, and the lock re-reads each candidate (a row another worker took meanwhile is skipped).
  const pending = p.fair
    ? `ranked AS (
      SELECT r.id, r.next_attempt_at, r.rn FROM (
        SELECT id, customer_id, next_attempt_at, row_number() OVER (PARTITION BY customer_id ORDER BY next_attempt_at, id) AS rn
        FROM (SELECT id, customer_id, next_attempt_at FROM deliveries WHERE state = 'pending' AND next_attempt_at <= ${p.now} ORDER BY next_attempt_at LIMIT ${p.fair.window}) w) r
      LEFT JOIN unnest(${p.fair.customers}, ${p.fair.allow}) AS a(customer_id, n) ON a.customer_id = r.customer_id
      WHERE r.rn <= COALESCE(a.n, ${p.fair.share})),
    pending AS (
      SELECT d.id, d.next_attempt_at, NULL::bigint AS lost_since, k.rn FROM deliveries d JOIN ranked k ON k.id = d.id
      WHERE d.state = 'pending' AND d.next_attempt_at <= ${p.now}
      ORDER BY k.rn, k.next_attempt_at LIMIT ${p.limit} FOR UPDATE OF d SKIP LOCKED)`
    : `pending AS (
      SELECT id, next_attempt_at, NULL::bigint AS lost_since FROM deliveries WHERE state = 'pending' AND next_attempt_at <= ${p.now}
      ORDER BY next_attempt_at LIMIT ${p.limit} FOR UPDATE SKIP LOCKED)`;
  return `${pending},
    expired AS (
      ${expired}),
    pick AS (SELECT id, lost_since FROM (SELECT * FROM pending UNION ALL SELECT * FROM expired) due, async_commit ORDER BY lost_since IS NULL${p.fair ? ', rn' : ''}, next_attempt_at LIMIT ${p.limit}),
    claimed AS (
      UPDATE deliveries d SET state = 'delivering', attempts = d.attempts + 1, lease_owner = ${p.owner}, next_attempt_at = ${p.leaseUntil}, updated_at = ${p.now}
      FROM pick WHERE d.id = pick.id
      RETURNING d.id, d.event_id, d.webhook_id, d.attempts, pick.lost_since)`;
}

/** What a claim answers per row: the lease, and the webhook and event sending needs. */
export const CLAIMED_COLUMNS = `c.id, c.event_id, c.webhook_id, c.attempts, c.lost_since,
    w.url, w.customer_id, w.allow_nonstandard_port, w.secret, w.previous_secret, w.previous_secret_expires_at,
    e.type AS event_type, e.subreddit AS event_subreddit, e.payload AS event_payload, e.created_at AS event_created_at
  FROM claimed c LEFT JOIN webhooks w ON w.id = c.webhook_id LEFT JOIN events e ON e.id = c.event_id`;

/** $1 owner, $2 lease until (ms), $3 now (ms), $4 limit. One round trip: the lease and what sending needs. */
export const CLAIM: PreparedStatement = {
  name: 'trendhooks_claim',
  text: `WITH ${ASYNC_COMMIT_CTE}, ${claimCtes({ owner: '$1', leaseUntil: '$2', now: '$3', limit: '$4' })}
  SELECT ${CLAIMED_COLUMNS}`,
};

/** The fair claim's parameters after `first` (FairClaim): window, share, and the allowances as two arrays. */
export const fairParams = (first: number) => ({
  window: `$${first}::int`,
  share: `$${first + 1}::int`,
  customers: `$${first + 2}::varchar[]`,
  allow: `$${first + 3}::int[]`,
});

/** CLAIM taking pending rows fairly: $5 window, $6 share, $7 customers and $8 their allowances (arrays). */
export const CLAIM_FAIR: PreparedStatement = {
  name: 'trendhooks_claim_fair',
  text: `WITH ${ASYNC_COMMIT_CTE}, ${claimCtes({ owner: '$1', leaseUntil: '$2', now: '$3', limit: '$4', fair: fairParams(5) })}
  SELECT ${CLAIMED_COLUMNS}`,
};

/**
 * The queue's customers for the worker's share (ActiveCustomers): $1 now (ms), $2 window. Those
 * with a leased row (any worker; at most $2 read) or among the first $2 due pending rows, and the
 * position, in due order, of the last of those customers' first due rows.
 */
export const ACTIVE_CUSTOMERS: PreparedStatement = {
  name: 'trendhooks_active_customers',
  text: `WITH due AS (SELECT id, customer_id, next_attempt_at FROM deliveries WHERE state = 'pending' AND next_attempt_at <= $1::bigint ORDER BY next_attempt_at LIMIT $2::int),
    firsts AS (SELECT customer_id, min(pos) AS first FROM (SELECT customer_id, row_number() OVER (ORDER BY next_attempt_at, id) AS pos FROM due) p GROUP BY customer_id)
  SELECT (SELECT count(*) FROM (SELECT customer_id FROM firsts UNION SELECT customer_id FROM (SELECT customer_id FROM deliveries WHERE state = 'delivering' LIMIT $2::int) l) u)::int AS active,
    COALESCE((SELECT max(first) FROM firsts), 0)::int AS reach`,
};
