import { HEALTH_ATTEMPTS_PER_DELIVERY } from '../../health-sql';

/**
 * healthSql's way to the attempts on PostgreSQL: a LATERAL subquery with a LIMIT, which PostgreSQL
 * cannot flatten into a join, so each picked delivery is one lookup of idx_attempts_delivery. As
 * a plain join it hashes the whole attempts table (every customer's) once the picked deliveries
 * are a few hundred. The LIMIT is far above what a retry schedule makes; it also bounds what one
 * delivery's attempts can cost.
 */
export const PG_HEALTH_ATTEMPTS_JOIN = `recent r CROSS JOIN LATERAL (SELECT a.outcome, a.started_at FROM delivery_attempts a WHERE a.delivery_id = r.id LIMIT ${HEALTH_ATTEMPTS_PER_DELIVERY}) a`;
