import { latestOutcomeCtes } from '../../../status/webhook-delivery-status.postgres';
import { clockOfSql } from '../../../status/webhook-delivery-status';
import { ASYNC_COMMIT_CTE } from './async-commit';
import type { PreparedStatement } from './statement';

/**
 * Outcomes of a batch, as CTEs over 16 parallel arrays ($1…$16): the attempt rows, the state
 * changes fenced on the lease (`held`), and each webhook's last_* from its held attempts, written
 * by the webhooks module's CTEs (latestOutcomeCtes) in the same statement.
 */
export const RECORD_CTES = `src AS (
      SELECT s.* FROM async_commit, unnest($1::varchar[], $2::varchar[], $3::int[], $4::bigint[], $5::int[], $6::int[], $7::varchar[], $8::varchar[], $9::text[],
                                         $10::varchar[], $11::bigint[], $12::varchar[], $13::bigint[], $14::varchar[], $15::varchar[], $16::varchar[])
        AS s(attempt_id, delivery_id, attempt_no, started_at, duration_ms, status_code, outcome, error_class, response_excerpt,
             state, next_attempt_at, last_error, now, owner, webhook_id, webhook_status)),
    attempts AS (
      INSERT INTO delivery_attempts (id, delivery_id, attempt_no, started_at, duration_ms, status_code, outcome, error_class, response_excerpt)
      SELECT attempt_id, delivery_id, attempt_no, started_at, duration_ms, status_code, outcome, error_class, response_excerpt FROM src),
    held AS (
      UPDATE deliveries d SET state = s.state, attempts = s.attempt_no, next_attempt_at = s.next_attempt_at, lease_owner = NULL,
        last_error = s.last_error, last_response_code = s.status_code, updated_at = s.now,
        delivered_at = CASE WHEN s.state = 'delivered' THEN s.now ELSE d.delivered_at END
      FROM src s WHERE d.id = s.delivery_id AND d.lease_owner = s.owner AND d.state = 'delivering'
      RETURNING d.id),
    outcomes AS (
      SELECT s.webhook_id, s.started_at AS at, s.webhook_status AS status, s.status_code AS code, ${clockOfSql('s.webhook_status', 's.error_class')} AS clock
      FROM src s JOIN held h ON h.id = s.delivery_id),
    ${latestOutcomeCtes('outcomes')}`;

/** The outcomes alone; answers the ids whose lease still held. */
export const RECORD: PreparedStatement = {
  name: 'trendhooks_record_attempts',
  text: `WITH ${ASYNC_COMMIT_CTE}, ${RECORD_CTES}
  SELECT id FROM held`,
};
