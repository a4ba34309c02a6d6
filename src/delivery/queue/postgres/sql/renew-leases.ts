import type { PreparedStatement } from './statement';

/**
 * A live worker's heartbeat: extends the lease of every delivery it still holds, in one
 * statement per renewal (not one per delivery), by primary key. Fenced like every outcome: a row
 * another worker took over (lease_owner changed) or that was recorded meanwhile is left alone.
 * `updated_at` stays the claim's time (a takeover logs the lost attempt from it).
 *
 * `SKIP LOCKED`: a row locked right now is being recorded, cancelled or taken over; the renewal
 * skips it rather than wait (and never deadlocks with an outcome batch locking the same rows in
 * another order). A held row it skips is renewed by the next renewal, well inside the lease.
 * $1 owner, $2 delivery ids, $3 lease until (ms); answers the ids renewed.
 */
export const RENEW_LEASES: PreparedStatement = {
  name: 'trendhooks_renew_leases',
  text: `UPDATE deliveries d SET next_attempt_at = $3
  FROM (SELECT id FROM deliveries WHERE id = ANY($2::varchar[]) AND lease_owner = $1 AND state = 'delivering' FOR UPDATE SKIP LOCKED) mine
  WHERE d.id = mine.id
  RETURNING d.id`,
};
