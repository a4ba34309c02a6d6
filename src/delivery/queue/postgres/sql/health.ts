import { HEALTH_ATTEMPTS_PER_DELIVERY, HEALTH_RECENT_DELIVERIES, healthStatement } from '../../health-sql';

/**
 * The health statement on PostgreSQL ($1 the webhook ids, an array; $2 since, in ms): one text
 * whatever the page's size, which PostgreSQL plans in a fraction of the time of a UNION ALL
 * branch per webhook (2.4 against 1.1 ms for a page of 10 in a micro-benchmark). Per webhook its
 * newest HEALTH_RECENT_DELIVERIES deliveries since $2, a LATERAL backward range of
 * idx_deliveries_webhook_created; their attempts a LATERAL subquery with a LIMIT, which PostgreSQL
 * cannot flatten into a join, so each is one lookup of idx_attempts_delivery (as a plain join it
 * hashed the whole attempts table, every customer's, once the picked deliveries were a few
 * hundred). The attempts LIMIT is far above what a retry schedule makes.
 */
export const PG_HEALTH_SQL = healthStatement(
  `SELECT r.id, r.webhook_id FROM unnest($1::varchar[]) AS w(id)
    CROSS JOIN LATERAL (SELECT d.id, d.webhook_id FROM deliveries d WHERE d.webhook_id = w.id AND d.created_at >= $2::bigint
                         ORDER BY d.created_at DESC, d.id DESC LIMIT ${HEALTH_RECENT_DELIVERIES}) r`,
  `recent r CROSS JOIN LATERAL (SELECT a.outcome, a.started_at FROM delivery_attempts a WHERE a.delivery_id = r.id LIMIT ${HEALTH_ATTEMPTS_PER_DELIVERY}) a`,
);
