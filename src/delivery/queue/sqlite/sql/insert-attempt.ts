/** One attempt row, in column order. */
export const INSERT_ATTEMPT = `INSERT INTO delivery_attempts (id, delivery_id, attempt_no, started_at, duration_ms, status_code, outcome, error_class, response_excerpt)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;
