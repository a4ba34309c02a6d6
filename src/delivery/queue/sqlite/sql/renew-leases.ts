/**
 * A live worker's heartbeat: extends the lease of every delivery it still holds, in one
 * statement per renewal (not one per delivery), by primary key. Fenced like every outcome: a row
 * another worker took over (lease_owner changed) or that was recorded meanwhile is left alone.
 * `updated_at` stays the claim's time (a takeover logs the lost attempt from it).
 * @owner, @ids (JSON array of delivery ids), @leaseUntil (ms); answers the ids renewed.
 */
export const RENEW_LEASES = `UPDATE deliveries SET next_attempt_at = @leaseUntil
         WHERE id IN (SELECT value FROM json_each(@ids)) AND lease_owner = @owner AND state = 'delivering'
         RETURNING id`;
