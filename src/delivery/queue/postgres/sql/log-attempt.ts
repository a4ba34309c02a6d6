/** One attempt row, $1…$9 in column order, without touching its delivery. */
export const LOG_ATTEMPT = `INSERT INTO delivery_attempts (id, delivery_id, attempt_no, started_at, duration_ms, status_code, outcome, error_class, response_excerpt)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`;
