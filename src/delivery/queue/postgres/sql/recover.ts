/**
 * One batch of recover in one statement: $1 delivery ids, $2 event ids, $3 insertable (the event is
 * not older than the webhook), $4 due times (ms), as arrays; $5 webhook id, $6 customer id, $7 now
 * (ms). A failed or cancelled delivery goes back to pending (attempts reset, its attempt log kept);
 * a missing row of an insertable event is written; a row pending, delivering or delivered is left
 * alone (the UPDATE re-checks the state of a row another transaction changed, and the INSERT
 * yields to any row that exists). Answers `queued`.
 */
export const RECOVER = `WITH t AS (
    SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::boolean[], $4::bigint[]) AS t(id, event_id, insertable, due)),
  requeued AS (
    UPDATE deliveries d SET state = 'pending', attempts = 0, next_attempt_at = t.due, lease_owner = NULL, updated_at = $7::bigint
    FROM t WHERE d.id = t.id AND d.webhook_id = $5::varchar AND d.state IN ('failed', 'cancelled')
    RETURNING d.id),
  inserted AS (
    INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, next_attempt_at, created_at, updated_at)
    SELECT t.id, t.event_id, $5::varchar, $6::varchar, 'pending', 0, t.due, $7::bigint, $7::bigint FROM t WHERE t.insertable
    ON CONFLICT DO NOTHING RETURNING id)
  SELECT (SELECT count(*) FROM requeued)::int + (SELECT count(*) FROM inserted)::int AS queued`;

/** What RECOVER would queue: $1 delivery ids, $2 insertable, as arrays; $3 webhook id. */
export const RECOVER_COUNT = `SELECT count(*)::int AS queued
  FROM unnest($1::varchar[], $2::boolean[]) AS t(id, insertable)
  LEFT JOIN deliveries d ON d.id = t.id AND d.webhook_id = $3::varchar
  WHERE (d.id IS NULL AND t.insertable) OR d.state IN ('failed', 'cancelled')`;
