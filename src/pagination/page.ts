import type { CursorDirection, CursorPosition, DecodedCursor } from './cursor-codec';

/** How the current page was reached: no cursor, a next cursor, or a prev cursor. */
export type PageDirection = CursorDirection | 'first';

/**
 * What a repository needs for a keyset query (rows ordered DESC by a unique key tuple):
 * `after` → rows with key strictly smaller than `after`, fetched DESC;
 * `before` → rows with key strictly greater than `before`, fetched ASC (closest first).
 * At most one of them is set. Fetch `limit + 1` rows either way.
 */
export interface PageRequest {
  limit: number;
  after?: CursorPosition;
  before?: CursorPosition;
}

/** A PageRequest that also remembers the direction, which `buildPage` needs. */
export interface KeysetPageRequest extends PageRequest {
  direction: PageDirection;
}

export interface PageInfo {
  limit: number;
  next_cursor: string | null;
  prev_cursor?: string | null;
}
export interface PageInfoWithPrev extends PageInfo {
  prev_cursor: string | null;
}
export interface PageInfoNextOnly {
  limit: number;
  next_cursor: string | null;
}

export interface Page<T, P extends PageInfo | PageInfoNextOnly = PageInfo> {
  items: T[];
  page: P;
}

/** The page object `buildPage` answers: with `prev_cursor` when asked for it, without otherwise. */
export type PageInfoFor<W extends boolean> = boolean extends W ? PageInfo : W extends true ? PageInfoWithPrev : PageInfoNextOnly;

/** Issues a cursor for a position and direction (normally a closure over CursorCodec.encode). */
export type IssueCursor = (position: CursorPosition, direction: CursorDirection) => string;

/** Turns a decoded cursor (or none, for the first page) into the repository's query. */
export function toPageRequest(limit: number, cursor?: DecodedCursor | null): KeysetPageRequest {
  if (!cursor) return { limit, direction: 'first' };
  return cursor.direction === 'next'
    ? { limit, direction: 'next', after: [...cursor.position] }
    : { limit, direction: 'prev', before: [...cursor.position] };
}

/** Rows to fetch: one extra tells whether another page exists in the walking direction. */
export function fetchSize(req: { limit: number }): number {
  return req.limit + 1;
}

/**
 * Builds the response page from rows fetched with `limit + 1` in the walking direction
 * (DESC for first/next, ASC for prev — those are reversed back to DESC here).
 *
 * - first page: prev_cursor null; next_cursor set iff the extra row exists.
 * - reached by next: prev_cursor points before the first item; next_cursor set iff the extra row exists.
 * - reached by prev: next_cursor points after the last item (the page we came from is there);
 *   prev_cursor set iff the extra row exists.
 * - An empty page (only possible when rows were deleted between requests) has no item to anchor
 *   cursors on, so both are null and the client restarts from the first page.
 * - withPrev false: the page object has only `limit` and `next_cursor` (no prev_cursor key).
 */
export function buildPage<T, W extends boolean>(
  rows: readonly T[],
  req: { limit: number; direction: PageDirection },
  keyOf: (row: T) => CursorPosition,
  issue: IssueCursor,
  opts: { withPrev: W },
): Page<T, PageInfoFor<W>> {
  const { limit, direction } = req;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`buildPage: limit must be a positive integer, got ${limit}`);
  // More rows than limit + 1 means the query is wrong; the "is there more" answer would be a guess.
  if (rows.length > limit + 1) throw new Error(`buildPage: got ${rows.length} rows for limit ${limit}; fetch limit + 1`);

  const moreInWalkingDirection = rows.length > limit;
  const items = rows.slice(0, limit);
  if (direction === 'prev') items.reverse();

  const first = items[0];
  const last = items[items.length - 1];
  let next: string | null;
  let prev: string | null;
  if (direction === 'prev') {
    next = last === undefined ? null : issue(keyOf(last), 'next');
    prev = opts.withPrev && moreInWalkingDirection && first !== undefined ? issue(keyOf(first), 'prev') : null;
  } else {
    next = moreInWalkingDirection && last !== undefined ? issue(keyOf(last), 'next') : null;
    prev = opts.withPrev && direction === 'next' && first !== undefined ? issue(keyOf(first), 'prev') : null;
  }

  const page: PageInfoNextOnly | PageInfoWithPrev = opts.withPrev ? { limit, next_cursor: next, prev_cursor: prev } : { limit, next_cursor: next };
  return { items, page: page as PageInfoFor<W> };
}
