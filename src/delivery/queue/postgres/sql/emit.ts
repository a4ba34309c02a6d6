import { notifyWorkersSql } from '../postgres-notify.waker';
import type { PreparedStatement } from './statement';

const EVENT_CTE = `ev AS (
      INSERT INTO events (id, type, subreddit, payload, created_at) VALUES ($1::varchar, $2::varchar, $3::varchar, $4::text, $5::bigint)
      ON CONFLICT (id) DO NOTHING RETURNING id)`;

/**
 * The deliveries of `rows` (columns id, event_id, webhook_id, customer_id, n: its row number),
 * pending from $6 (now, ms); the first $9 (limit) leased to $7 (owner) until $8 (ms) instead,
 * charged their first attempt as a claim would (state, attempts, lease: see claimCtes).
 */
const deliveriesCte = (rows: string) => `ins AS (
      INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, lease_owner, next_attempt_at, created_at, updated_at)
      SELECT r.id, r.event_id, r.webhook_id, r.customer_id,
        CASE WHEN r.n <= $9::int THEN 'delivering' ELSE 'pending' END, CASE WHEN r.n <= $9::int THEN 1 ELSE 0 END,
        CASE WHEN r.n <= $9::int THEN $7::varchar END, CASE WHEN r.n <= $9::int THEN $8::bigint ELSE $6::bigint END, $6::bigint, $6::bigint
      FROM ${rows} r
      ON CONFLICT DO NOTHING RETURNING id, webhook_id, state)`;

/**
 * One row per leased delivery with what sending it needs (CLAIMED_COLUMNS' names; the event from
 * the parameters, since rows this statement inserts are not visible to its own joins), plus a
 * row with `id` NULL carrying `created` (the event is new) and `n` (deliveries inserted). The
 * workers' wake-up rides along when some are left pending: LISTENing workers hear it at commit.
 */
const ANSWER = `SELECT NULL AS id, EXISTS (SELECT 1 FROM ev) AS created, c.n, CASE WHEN c.n > c.leased THEN ${notifyWorkersSql()} END AS notified,
         NULL AS event_id, NULL AS webhook_id, NULL::int AS attempts, NULL::bigint AS lost_since, NULL AS url, NULL AS customer_id, NULL::boolean AS allow_nonstandard_port,
         NULL AS secret, NULL AS previous_secret, NULL::bigint AS previous_secret_expires_at, NULL::bigint AS disabled_at, NULL AS event_type, NULL AS event_subreddit, NULL AS event_payload, NULL::bigint AS event_created_at
  FROM (SELECT count(*)::int AS n, count(*) FILTER (WHERE state = 'delivering')::int AS leased FROM ins) c
  UNION ALL
  SELECT i.id, NULL, NULL, NULL, $1::varchar, i.webhook_id, 1, NULL, w.url, w.customer_id, w.allow_nonstandard_port, w.secret, w.previous_secret, w.previous_secret_expires_at, w.disabled_at,
         $2::varchar, $3::varchar, $4::text, $5::bigint
  FROM ins i LEFT JOIN webhooks w ON w.id = i.webhook_id WHERE i.state = 'delivering'`;

/**
 * An event and its fan-out, in one statement (one round trip, one commit; the outbox stays
 * atomic): the event row, one delivery per endpoint the subscription source answered, the lease
 * of the first $9 to the emitting process's worker, and the NOTIFY. $10 delivery ids (each
 * `deliveryId(event, endpoint)`), $11 endpoint ids, as arrays (one parameter each, whatever their
 * length), in the source's order. An endpoint that is disabled or gone gets no delivery (the event
 * is still stored, for recovery); the owner is the endpoint's own. A replayed event inserts
 * nothing (`ev` is empty).
 * $1 id, $2 type, $3 subreddit, $4 payload, $5 created at (ms), $6 now (ms), $7 lease owner,
 * $8 lease until (ms), $9 how many to lease (0: none). A named prepared statement on the API's
 * pool (its text is long: parsing and planning it each time cost more than its work at small
 * fan-outs); it commits synchronously, as the outbox must.
 */
export const EMIT_TO_ENDPOINTS: PreparedStatement = {
  name: 'trendhooks_emit_endpoints',
  text: `WITH ${EVENT_CTE},
    targets AS (
      SELECT t.id, ev.id AS event_id, t.webhook_id, w.customer_id, row_number() OVER (ORDER BY t.n) AS n
      FROM ev CROSS JOIN unnest($10::varchar[], $11::varchar[]) WITH ORDINALITY AS t(id, webhook_id, n)
      JOIN webhooks w ON w.id = t.webhook_id AND w.disabled_at IS NULL),
    ${deliveriesCte('targets')}
  ${ANSWER}`,
};

/** $1 event id: a row when it is stored (with its deliveries: one statement wrote both). */
export const EVENT_STORED: PreparedStatement = {
  name: 'trendhooks_event_stored',
  text: 'SELECT 1 AS stored FROM events WHERE id = $1::varchar',
};
