import { TEST_EVENT_ID_PREFIX } from '../../events/catalogue';
import type { PageRequest } from '../../pagination/page';
import type { EventRow } from './types';

/**
 * The keyset of an events history page (newest first over (created_at, id)): the comparison a
 * row must pass against the cursor's position (none on the first page) and the order rows are
 * read in (ASC for a prev page, reversed later by buildPage).
 */
export function eventsKeyset(req: PageRequest): { op: '<' | '>'; dir: 'ASC' | 'DESC'; pos: [number, string] | null } {
  const pos = req.before ?? req.after;
  return {
    op: req.before ? '>' : '<',
    dir: req.before ? 'ASC' : 'DESC',
    pos: pos ? [Number(pos[0]), String(pos[1])] : null,
  };
}

/** Rows of several subscriptions merged in the page's order, `limit + 1` at most. */
export function mergeEventRows(rows: EventRow[], dir: 'ASC' | 'DESC', limit: number): EventRow[] {
  const sign = dir === 'ASC' ? 1 : -1;
  return rows
    .sort((a, b) => sign * (a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)))
    .slice(0, limit + 1);
}

/** An events row as either driver answers it (pg: BIGINT as a string). */
export function toEventRow(r: { id: string; type: string; subreddit: string; payload: string; created_at: string | number }): EventRow {
  return { id: r.id, type: r.type, subreddit: r.subreddit, payload: r.payload, createdAt: new Date(Number(r.created_at)) };
}

/** A subscription's lower bound of created_at: from its own start, or `since` when later. */
export function lowerBound(from: Date, since?: Date): number {
  return Math.max(from.getTime(), since ? since.getTime() : -Infinity);
}

/**
 * SQL: the events row whose id is `column` is not a test event (POST /v1/webhooks/{id}/test). A
 * test event has its webhook's kind and subreddit but reports no trend, so neither the events
 * history nor recover reads it. `substr`, not LIKE: `_` is a LIKE wildcard and SQLite's LIKE
 * ignores case. Checked on the rows an index range reads; it changes no plan.
 */
export function notTestEventSql(column: string): string {
  return `substr(${column}, 1, ${TEST_EVENT_ID_PREFIX.length}) <> '${TEST_EVENT_ID_PREFIX}'`;
}
