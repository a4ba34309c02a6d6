/**
 * The deliveries a webhook's health reads: its newest this many created in the window (24 h).
 * A webhook that made more (a recover, a burst of test events) is judged on its recent ones, and
 * the page of webhooks costs at most this many deliveries (and their attempts) per webhook.
 */
export const HEALTH_RECENT_DELIVERIES = 500;

/** Attempts of one delivery a health statement reads at most, where the dialect can bound them (PostgreSQL). */
export const HEALTH_ATTEMPTS_PER_DELIVERY = 1000;

/**
 * The health statement around two pieces: `recent`, a SELECT of (id, webhook_id) of the picked
 * deliveries, and `attempts`, a FROM clause reaching their attempts from `recent r` as `a` (with
 * `outcome` and `started_at`). Both are read once (MATERIALIZED: SQLite would otherwise read them
 * twice). `failing` counts the failed attempts after the newest delivered one.
 */
export function healthStatement(recent: string, attempts: string): string {
  return `WITH recent AS MATERIALIZED (${recent}),
  x AS MATERIALIZED (
    SELECT r.webhook_id AS webhook_id, a.outcome AS outcome, a.started_at AS started_at FROM ${attempts}),
  ok AS (SELECT webhook_id, MAX(started_at) AS last_ok FROM x WHERE outcome = 'delivered' GROUP BY webhook_id)
SELECT x.webhook_id AS webhook_id, COUNT(*) AS attempts,
       SUM(CASE WHEN x.outcome = 'delivered' THEN 1 ELSE 0 END) AS delivered,
       SUM(CASE WHEN x.outcome <> 'delivered' AND (ok.last_ok IS NULL OR x.started_at > ok.last_ok) THEN 1 ELSE 0 END) AS failing
  FROM x LEFT JOIN ok ON ok.webhook_id = x.webhook_id
 GROUP BY x.webhook_id`;
}

/**
 * Health counts of `n` webhooks (parameters :id0 … :id{n-1} and :since, in ms), one statement for
 * the whole page, as TypeOrmDeliveryQueue runs it (SQLite). Each webhook's newest
 * HEALTH_RECENT_DELIVERIES deliveries since :since are one backward range of
 * idx_deliveries_webhook_created with a LIMIT, a branch of a UNION ALL (SQLite has no LATERAL);
 * their attempts a plain join, which SQLite runs as one lookup of idx_attempts_delivery each.
 */
export function healthSql(n: number): string {
  const branches = Array.from(
    { length: n },
    (_, i) =>
      `SELECT r${i}.id, r${i}.webhook_id FROM (SELECT d.id AS id, d.webhook_id AS webhook_id FROM deliveries d WHERE d.webhook_id = :id${i} AND d.created_at >= :since ORDER BY d.created_at DESC, d.id DESC LIMIT ${HEALTH_RECENT_DELIVERIES}) r${i}`,
  );
  return healthStatement(branches.join('\n    UNION ALL '), 'recent r JOIN delivery_attempts a ON a.delivery_id = r.id');
}

/** The named parameters of healthSql(ids.length). */
export function healthParams(ids: readonly string[], since: Date): Record<string, string | number> {
  const p: Record<string, string | number> = { since: since.getTime() };
  ids.forEach((id, i) => (p[`id${i}`] = id));
  return p;
}
