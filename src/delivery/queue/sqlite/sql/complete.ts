/**
 * An attempt's outcome, fenced on the lease: state, attempts, next attempt (ms), last error,
 * last response code, now, then state and now again (delivered_at), delivery id, lease owner.
 */
export const COMPLETE = `UPDATE deliveries SET state = ?, attempts = ?, next_attempt_at = ?, lease_owner = NULL, last_error = ?,
           last_response_code = ?, updated_at = ?, delivered_at = CASE WHEN ? = 'delivered' THEN ? ELSE delivered_at END
         WHERE id = ? AND lease_owner = ? AND state = 'delivering'`;
