import type { SelectQueryBuilder } from 'typeorm';
import type { CursorPosition } from '../pagination/cursor-codec';
import type { PageRequest } from '../pagination/page';
import type { PostEntity } from './post.entity';

/**
 * What a page holds of a post: everything its resource shows. Not the author key, the first seen
 * and updated times, which no answer shows: reading them was a fifth of a page's query on SQLite.
 */
export type PostListItem = Omit<PostEntity, 'authorKey' | 'firstSeenAt' | 'updatedAt'>;

/** The entity properties a page selects (PostListItem's). */
export const POST_LIST_FIELDS = ['id', 'subreddit', 'author', 'title', 'selftext', 'url', 'permalink', 'score', 'numComments', 'createdAt'] as const satisfies readonly (keyof PostListItem)[];

/** The column a posts page is scoped by; each has its own (column, created_at, id) index. */
export type PostScope = 'subreddit' | 'author_key';

/**
 * The posts store. Posts are public Reddit data, so nothing here is tenant-scoped. The injection
 * token; the implementation for the database's dialect is chosen in PostsModule.
 */
export abstract class PostStore {
  /** Keyset page over (created_at, id) DESC within one subreddit; `limit + 1` rows. */
  abstract pageBySubreddit(subreddit: string, req: PageRequest): Promise<PostListItem[]>;

  /** The same within one author (lower-cased username). */
  abstract pageByAuthor(authorKey: string, req: PageRequest): Promise<PostListItem[]>;

  /** The exact query a page runs, so tests and the benchmark can EXPLAIN it. */
  abstract pageQuery(scope: PostScope, value: string, req: PageRequest): SelectQueryBuilder<PostEntity>;

  /** Inserts new posts and refreshes the mutable fields of known ones. Returns the ids that were new. */
  abstract upsertMany(posts: readonly PostEntity[]): Promise<{ insertedIds: Set<string> }>;

  /** These posts as stored (those that are). */
  abstract findByIds(ids: readonly string[]): Promise<PostEntity[]>;

  /** Deletes these posts (removed or deleted on Reddit). Returns how many were stored. */
  abstract purge(ids: readonly string[]): Promise<number>;

  /** Drops the author of these posts (the account was deleted on Reddit): `[deleted]`. Returns how many changed. */
  abstract anonymise(ids: readonly string[]): Promise<number>;

  /** Deletes the posts created before `before` (epoch ms), at most `limit` of them, oldest first. Returns how many. */
  abstract purgeCreatedBefore(before: number, limit: number): Promise<number>;

  /**
   * One subreddit's posts created from `createdFrom`, oldest first (created_at, id), whoever stored
   * them: the history a trend detector warms up from when a process starts or takes it over.
   */
  abstract history(subreddit: string, createdFrom: Date): Promise<PostEntity[]>;

  /**
   * Ids of these subreddits' posts created at or after `createdFrom` (epoch ms) and last seen before
   * `seenBefore`, newest first, at most `limit`: the ones the poller re-reads for growth.
   */
  abstract rereadCandidates(subreddits: readonly string[], createdFrom: number, seenBefore: number, limit: number): Promise<string[]>;

  /** Per subreddit with posts created at or after `since` (epoch ms): how many, and the oldest and newest one's creation. */
  abstract countsSince(subreddits: readonly string[], since: number): Promise<SubredditPostCounts>;
}

/** Posts per subreddit since a time (absent: none), with the oldest and newest one's creation (epoch ms). */
export type SubredditPostCounts = Map<string, { n: number; oldest: number; newest: number }>;

/** countsSince's rows, as either driver answers them (pg: BIGINT and COUNT as strings). */
export function subredditPostCounts(rows: readonly { subreddit: string; n: unknown; oldest: unknown; newest: unknown }[]): SubredditPostCounts {
  return new Map(rows.map((r) => [r.subreddit, { n: Number(r.n), oldest: Number(r.oldest), newest: Number(r.newest) }]));
}

/** Whether a cursor position is the (created_at ms, id) pair posts pages are keyed by. */
export function isPostKeyset(position: CursorPosition): position is [number, string] {
  return position.length === 2 && Number.isSafeInteger(position[0]) && typeof position[1] === 'string';
}
