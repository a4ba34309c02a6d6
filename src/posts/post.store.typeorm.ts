import { InjectTrendhooksDataSource } from '../core/tokens';
import { DataSource, SelectQueryBuilder } from 'typeorm';
import type { CursorPosition } from '../pagination/cursor-codec';
import type { PageRequest } from '../pagination/page';
import { PostEntity } from './post.entity';
import { isPostKeyset, PostScope, PostStore } from './post.store';

/** Rows per INSERT: 13 parameters each stays far below both drivers' parameter limits. */
export const UPSERT_CHUNK = 500;

const COLUMNS = ['id', 'subreddit', 'author', 'author_key', 'title', 'selftext', 'url', 'permalink', 'score', 'num_comments', 'created_at', 'first_seen_at', 'updated_at'];
// What a later sighting of the same post may change; subreddit, author and created_at never do.
const UPDATED_ON_CONFLICT = ['score', 'num_comments', 'title', 'selftext', 'updated_at'];

/** The PostStore both dialects share, written once; a dialect only says how it numbers parameters. */
export abstract class TypeOrmPostStore extends PostStore {
  constructor(@InjectTrendhooksDataSource() private readonly ds: DataSource) {
    super();
  }

  /** The placeholder of the `i`-th (0-based) parameter of a raw statement. */
  protected abstract placeholder(i: number): string;

  pageBySubreddit(subreddit: string, req: PageRequest): Promise<PostEntity[]> {
    return this.pageQuery('subreddit', subreddit, req).getMany();
  }

  pageByAuthor(authorKey: string, req: PageRequest): Promise<PostEntity[]> {
    return this.pageQuery('author_key', authorKey, req).getMany();
  }

  pageQuery(scope: PostScope, value: string, req: PageRequest): SelectQueryBuilder<PostEntity> {
    const qb = this.ds.getRepository(PostEntity).createQueryBuilder('p').where(`p.${scope} = :value`, { value });
    const anchor = req.before ?? req.after;
    const dir = req.before ? 'ASC' : 'DESC';
    if (anchor) {
      const [a, b] = keysetOf(anchor);
      const [strict, inclusive] = req.before ? ['>', '>='] : ['<', '<='];
      // The leading `created_at <= :a` is implied by the OR, but without it neither planner can
      // range-scan the index: SQLite turns the OR into two index searches plus a sort, PostgreSQL
      // into a filter over the whole subreddit. With it, a deep page is one short index range.
      qb.andWhere(`p.created_at ${inclusive} :a AND (p.created_at ${strict} :a OR (p.created_at = :a AND p.id ${strict} :b))`, { a, b });
    }
    return qb.orderBy('p.createdAt', dir).addOrderBy('p.id', dir).limit(req.limit + 1);
  }

  /**
   * Inserts new posts and refreshes the mutable fields of known ones (ON CONFLICT (id), on both
   * drivers), chunk by chunk. Returns the ids that were new.
   */
  async upsertMany(posts: readonly PostEntity[]): Promise<{ insertedIds: Set<string> }> {
    const insertedIds = new Set<string>();
    for (const chunk of chunksWithoutRepeats(posts, UPSERT_CHUNK)) {
      const ids = chunk.map((p) => p.id);
      // Two single statements, no transaction: on SQLite TypeORM shares one connection, so an
      // async transaction would also capture (and could roll back) other requests' writes. The
      // upsert itself is one atomic statement; a concurrent ingest of the same post can at worst
      // shift which call counts it as new.
      const existing: { id: string }[] = await this.ds.query(`SELECT id FROM posts WHERE id IN (${this.placeholders(0, ids.length)})`, ids);
      const known = new Set(existing.map((r) => r.id));
      for (const id of ids) if (!known.has(id)) insertedIds.add(id);
      const values: unknown[] = [];
      const rows = chunk.map((p, i) => {
        values.push(p.id, p.subreddit, p.author, p.authorKey, p.title, p.selftext, p.url, p.permalink, p.score, p.numComments, p.createdAt.getTime(), p.firstSeenAt.getTime(), p.updatedAt.getTime());
        return `(${this.placeholders(i * COLUMNS.length, COLUMNS.length)})`;
      });
      const set = UPDATED_ON_CONFLICT.map((c) => `${c} = excluded.${c}`).join(', ');
      await this.ds.query(`INSERT INTO posts (${COLUMNS.join(', ')}) VALUES ${rows.join(', ')} ON CONFLICT (id) DO UPDATE SET ${set}`, values);
    }
    return { insertedIds };
  }

  private placeholders(offset: number, n: number): string {
    return Array.from({ length: n }, (_, i) => this.placeholder(offset + i)).join(', ');
  }
}

function keysetOf(position: CursorPosition): [number, string] {
  // The service refuses other shapes as INVALID_CURSOR first; reaching this is a programming error.
  if (!isPostKeyset(position)) throw new Error('posts keyset position must be [created_at_ms, id]');
  return position;
}

/**
 * Splits into chunks of at most `size`, starting a new chunk when an id repeats: one statement
 * may not update the same row twice (PostgreSQL refuses it), and the later sighting must win.
 */
function* chunksWithoutRepeats(posts: readonly PostEntity[], size: number): Generator<PostEntity[]> {
  let chunk: PostEntity[] = [];
  let ids = new Set<string>();
  for (const p of posts) {
    if (chunk.length === size || ids.has(p.id)) {
      yield chunk;
      chunk = [];
      ids = new Set();
    }
    chunk.push(p);
    ids.add(p.id);
  }
  if (chunk.length > 0) yield chunk;
}
