/** Now (ms), why (null: left as it was), delivery id, lease owner. The claim's charge is given back: no attempt was made. */
export const CANCEL = `UPDATE deliveries SET state = 'cancelled', attempts = attempts - 1, next_attempt_at = NULL, lease_owner = NULL, last_error = COALESCE(?, last_error), updated_at = ?
  WHERE id = ? AND lease_owner = ?`;
