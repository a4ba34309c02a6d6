/** Now (ms), delivery id, lease owner. The claim's charge is given back: no attempt was made. */
export const CANCEL = `UPDATE deliveries SET state = 'cancelled', attempts = attempts - 1, next_attempt_at = NULL, lease_owner = NULL, updated_at = ? WHERE id = ? AND lease_owner = ?`;
