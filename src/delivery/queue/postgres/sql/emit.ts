import { notifyWorkersSql } from '../postgres-notify.waker';
import { deliveryIdSql } from './delivery-id';

const EVENT_CTE = `ev AS (
      INSERT INTO events (id, type, subreddit, payload, created_at) VALUES ($1::varchar, $2::varchar, $3::varchar, $4::text, $5::bigint)
      ON CONFLICT (id) DO NOTHING RETURNING id)`;

/** The deliveries of `rows` (columns id, webhook_id, customer_id), pending from $6 (now, ms). */
const deliveriesCte = (rows: string) => `ins AS (
      INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, next_attempt_at, created_at, updated_at)
      SELECT r.id, r.event_id, r.webhook_id, r.customer_id, 'pending', 0, $6::bigint, $6::bigint, $6::bigint FROM ${rows} r
      ON CONFLICT DO NOTHING RETURNING 1)`;

/**
 * `created` (the event is new), `n` (deliveries inserted), and the workers' wake-up when there
 * are any: LISTENing workers hear it when the statement commits, with its rows.
 */
const ANSWER = `SELECT EXISTS (SELECT 1 FROM ev) AS created, c.n, CASE WHEN c.n > 0 THEN ${notifyWorkersSql()} END AS notified
  FROM (SELECT count(*)::int AS n FROM ins) c`;

/**
 * An event and its fan-out to every subscriber of its kind and subreddit, in one statement (one
 * round trip, one commit; the outbox stays atomic): the event row, the subscriber lookup, one
 * delivery per subscriber with its id derived in SQL (deliveryIdSql, the same id as
 * `deliveryId()`), and the NOTIFY. A replayed event inserts nothing (`ev` is empty).
 * $1 id, $2 type, $3 subreddit, $4 payload, $5 created at (ms), $6 now (ms).
 */
export const EMIT_TO_SUBSCRIBERS = `WITH ${EVENT_CTE},
    subs AS (
      SELECT ${deliveryIdSql('ev.id', 'w.id')} AS id, ev.id AS event_id, w.id AS webhook_id, w.customer_id
      FROM ev JOIN webhooks w ON w.event = $2::varchar AND w.subreddit = $3::varchar),
    ${deliveriesCte('subs')}
  ${ANSWER}`;

/**
 * The same for exactly these webhooks (a test event): $7 delivery ids, $8 webhook ids, $9
 * customer ids, as arrays (one parameter each, whatever their length).
 */
export const EMIT_TO_WEBHOOKS = `WITH ${EVENT_CTE},
    targets AS (
      SELECT t.id, ev.id AS event_id, t.webhook_id, t.customer_id
      FROM ev CROSS JOIN unnest($7::varchar[], $8::varchar[], $9::varchar[]) AS t(id, webhook_id, customer_id)),
    ${deliveriesCte('targets')}
  ${ANSWER}`;
