import { notTestEventSql } from '../../events-keyset';

/**
 * A page of the events history over many subscriptions: per subscription ($1 kinds, $2
 * subreddits, $3 lower bounds of created_at in ms, as arrays) one range of
 * idx_events_type_subreddit_created read at most $n rows deep (LATERAL … LIMIT), then the
 * newest of all of them. `bound` is the keyset condition on `e` (or '' for the first page),
 * `dir` the order (DESC, or ASC for a prev page), `limit` the placeholder of the row count.
 */
export function eventsPageSql(bound: string, dir: 'ASC' | 'DESC', limit: string): string {
  return `SELECT x.id, x.type, x.subreddit, x.payload, x.created_at
  FROM unnest($1::varchar[], $2::varchar[], $3::bigint[]) AS s(type, subreddit, lower)
  CROSS JOIN LATERAL (
    SELECT e.id, e.type, e.subreddit, e.payload, e.created_at FROM events e
     WHERE e.type = s.type AND e.subreddit = s.subreddit AND e.created_at >= s.lower AND ${notTestEventSql('e.id')}${bound ? ` AND ${bound}` : ''}
     ORDER BY e.created_at ${dir}, e.id ${dir} LIMIT ${limit}) x
  ORDER BY x.created_at ${dir}, x.id ${dir} LIMIT ${limit}`;
}
