/**
 * The claim reads the rows whose lease expired first (RETURNING sees only new values), then
 * leases. Both use two ordered index range scans (pending; delivering with an expired lease),
 * each stopping after `limit` rows: `state IN (…) ORDER BY` would sort every due row on every
 * claim. Expired leases come before pending rows, whatever their due times: a dead worker's
 * deliveries are resent within a lease of its death, not after the backlog.
 *
 * The leases pick rows by rowid, not by id: idx_deliveries_due holds the rowid, so the scan reads
 * the index alone and the UPDATE goes straight to each row, where picking ids read every row to
 * get its id and then looked it up again through the id's index (about 1 µs less per claimed row,
 * 4.4 → 3.4 µs, in a loop of 34-row claims over 50,000 due rows).
 */
export const EXPIRED_LEASES = `SELECT id, updated_at FROM deliveries WHERE state = 'delivering' AND next_attempt_at <= @now ORDER BY next_attempt_at LIMIT @limit`;

/**
 * Pending rows of the customers in @skip (a JSON array of customer ids: those already holding
 * their share of the worker's slots, see the worker's fairness) are passed over, among the first
 * @window due rows: a claim reaches other customers' rows behind theirs, and reads at most that
 * many rows to do so. Only in the `…_SKIPPING` statements: the plain ones keep the index-only scan.
 */
const SKIP = ` AND rowid IN (SELECT rowid FROM deliveries WHERE state = 'pending' AND next_attempt_at <= @now ORDER BY next_attempt_at LIMIT @window)
               AND customer_id NOT IN (SELECT value FROM json_each(@skip))`;

/** @owner, @leaseUntil, @now (ms), @limit. */
const claimSql = (skip: string) => `UPDATE deliveries SET state = 'delivering', attempts = attempts + 1, lease_owner = @owner, next_attempt_at = @leaseUntil, updated_at = @now
         WHERE rowid IN (
           SELECT rid FROM (
             SELECT * FROM (SELECT rowid AS rid, next_attempt_at, 1 AS fresh FROM deliveries WHERE state = 'pending' AND next_attempt_at <= @now${skip} ORDER BY next_attempt_at LIMIT @limit)
             UNION ALL
             SELECT * FROM (SELECT rowid AS rid, next_attempt_at, 0 AS fresh FROM deliveries WHERE state = 'delivering' AND next_attempt_at <= @now ORDER BY next_attempt_at LIMIT @limit)
           ) ORDER BY fresh, next_attempt_at LIMIT @limit)
         RETURNING id, event_id, webhook_id, attempts`;
export const CLAIM = claimSql('');
/** CLAIM passing over the pending rows of the customers in @skip. */
export const CLAIM_SKIPPING = claimSql(SKIP);

/**
 * CLAIM when EXPIRED_LEASES, run just before in the same transaction, found no expired lease (the
 * usual case): the second range scan would find nothing, and leaving it out also leaves out the
 * union's sort.
 */
const claimPendingSql = (skip: string) => `UPDATE deliveries SET state = 'delivering', attempts = attempts + 1, lease_owner = @owner, next_attempt_at = @leaseUntil, updated_at = @now
         WHERE rowid IN (SELECT rowid FROM deliveries WHERE state = 'pending' AND next_attempt_at <= @now${skip} ORDER BY next_attempt_at LIMIT @limit)
         RETURNING id, event_id, webhook_id, attempts`;
export const CLAIM_PENDING = claimPendingSql('');
/** CLAIM_PENDING passing over the pending rows of the customers in @skip. */
export const CLAIM_PENDING_SKIPPING = claimPendingSql(SKIP);

/** One statement for all of a claim's webhooks (a JSON array of ids): fewer calls than one each. */
export const CLAIMED_WEBHOOKS =
  'SELECT id, url, customer_id, allow_nonstandard_port, secret, previous_secret, previous_secret_expires_at, disabled_at FROM webhooks WHERE id IN (SELECT value FROM json_each(?))';

/** A claimed row's event, by id. */
export const CLAIMED_EVENT = 'SELECT type AS event_type, subreddit AS event_subreddit, payload AS event_payload, created_at AS event_created_at FROM events WHERE id = ?';
