import { notifyWorkersSql } from '../postgres-notify.waker';

/**
 * One chunk of a fan-out, one statement whatever its size (three array parameters, not 4 per
 * row): parsing and planning a 2,000-parameter VALUES list cost more than inserting its rows.
 * $1 delivery ids, $2 event id, $3 now (ms), $4 webhook ids, $5 customer ids; answers `n`, the
 * rows inserted. The workers' wake-up rides on the last chunk ($6) when the fan-out (`n` + $7,
 * the earlier chunks' count) created anything: LISTENing workers get it when this commits.
 */
export const INSERT_DELIVERIES = `WITH ins AS (
             INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, next_attempt_at, created_at, updated_at)
             SELECT t.id, $2::varchar, t.webhook_id, t.customer_id, 'pending', 0, $3::bigint, $3::bigint, $3::bigint
             FROM unnest($1::varchar[], $4::varchar[], $5::varchar[]) AS t(id, webhook_id, customer_id)
             ON CONFLICT DO NOTHING RETURNING 1),
           counted AS (SELECT count(*)::int AS n FROM ins)
           SELECT n, CASE WHEN $6::boolean AND n + $7::int > 0 THEN ${notifyWorkersSql()} END AS notified FROM counted`;
