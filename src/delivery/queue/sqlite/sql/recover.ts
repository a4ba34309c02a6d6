import { notTestEventSql } from '../../events-keyset';

/**
 * Due time (ms), now (ms), delivery id, webhook id: a failed or cancelled delivery back to pending,
 * attempts reset (its attempt log kept); any other state is left alone.
 */
export const REQUEUE_FINISHED = `UPDATE deliveries SET state = 'pending', attempts = 0, next_attempt_at = ?, lease_owner = NULL, updated_at = ?
         WHERE id = ? AND webhook_id = ? AND state IN ('failed', 'cancelled')`;

/** Delivery id, webhook id: the delivery's state, if it has a row. */
export const DELIVERY_STATE = 'SELECT state FROM deliveries WHERE id = ? AND webhook_id = ?';

/**
 * Kind, subreddit, lower bound of created_at (ms), then the keyset's created_at and id three
 * times as needed, and the row count: one subscription's events for a history page, newest first
 * (ASC for a prev page), one range of idx_events_type_subreddit_created.
 */
export function eventsOfSubscriptionSql(op: '<' | '>' | null, dir: 'ASC' | 'DESC'): string {
  const bound = op ? ` AND created_at ${op}= ? AND (created_at ${op} ? OR (created_at = ? AND id ${op} ?))` : '';
  return `SELECT id, type, subreddit, payload, created_at FROM events
         WHERE type = ? AND subreddit = ? AND created_at >= ? AND ${notTestEventSql('id')}${bound} ORDER BY created_at ${dir}, id ${dir} LIMIT ?`;
}
