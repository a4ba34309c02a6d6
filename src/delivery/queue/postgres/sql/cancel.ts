/** $1 now (ms), $2 delivery id, $3 lease owner, $4 why (null: left as it was). The claim's charge is given back: no attempt was made. */
export const CANCEL = `UPDATE deliveries SET state = 'cancelled', attempts = attempts - 1, next_attempt_at = NULL, lease_owner = NULL, last_error = COALESCE($4::varchar, last_error), updated_at = $1
  WHERE id = $2 AND lease_owner = $3`;
