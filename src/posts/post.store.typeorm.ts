import { DELETED_AUTHOR } from './reddit-parse';
import { InjectTrendhooksDataSource } from '../database/data-source.token';
import { DataSource, In, MoreThanOrEqual, SelectQueryBuilder } from 'typeorm';
import type { CursorPosition } from '../pagination/cursor-codec';
import type { PageRequest } from '../pagination/page';
import { PostEntity } from './post.entity';
import { isPostKeyset, POST_LIST_FIELDS, PostListItem, PostScope, PostStore } from './post.store';

/** Rows per INSERT: 13 parameters each stays far below both drivers' parameter limits. */
export const UPSERT_CHUNK = 500;

const COLUMNS = ['id', 'subreddit', 'author', 'author_key', 'title', 'selftext', 'url', 'permalink', 'score', 'num_comments', 'created_at', 'first_seen_at', 'updated_at'];
// What a later sighting of the same post may change; subreddit, author and created_at never do.
const UPDATED_ON_CONFLICT = ['score', 'num_comments', 'title', 'selftext', 'updated_at'];

/** The PostStore both dialects share, written once; a dialect only says how it numbers parameters. */
export abstract class TypeOrmPostStore extends PostStore {
  constructor(@InjectTrendhooksDataSource() protected readonly ds: DataSource) {
    super();
  }

  /** The placeholder of the `i`-th (0-based) parameter of a raw statement. */
  protected abstract placeholder(i: number): string;

  pageBySubreddit(subreddit: string, req: PageRequest): Promise<PostListItem[]> {
    return this.page('subreddit', subreddit, req);
  }

  pageByAuthor(authorKey: string, req: PageRequest): Promise<PostListItem[]> {
    return this.page('author_key', authorKey, req);
  }

  private readonly compiled = new Map<string, CompiledPage>();

  /**
   * The statement `pageQuery` builds, run raw and mapped by hand: building it and hydrating
   * entities per request were most of the posts routes' database cost (bench/api). The SQL of each
   * shape (scope, direction, limit) is taken from `pageQuery` once, with marker values that tell
   * which parameter is which, so the two cannot drift apart.
   */
  private async page(scope: PostScope, value: string, req: PageRequest): Promise<PostListItem[]> {
    const anchor = req.before ?? req.after;
    const key = `${scope} ${req.before ? 'before' : req.after ? 'after' : 'first'} ${req.limit}`;
    let c = this.compiled.get(key);
    if (!c) {
      const probe: PageRequest = { limit: req.limit, ...(req.before ? { before: [MARK_A, MARK_B] } : req.after ? { after: [MARK_A, MARK_B] } : {}) };
      const [built, params] = this.pageQuery(scope, MARK_VALUE, probe).getQueryAndParameters();
      const bound = params.map((p) => (p === MARK_VALUE ? 0 : p === MARK_A ? 1 : p === MARK_B ? 2 : -1));
      if (bound.includes(-1)) throw new Error(`posts page query has a parameter other than its scope and keyset: ${built}`);
      // TypeORM writes numbers into the SQL text on SQLite: there the created_at marker becomes a parameter here.
      const roles: number[] = [];
      let next = 0;
      const sql =
        this.placeholder(0) === '?'
          ? built.replace(MARK_A_OR_PLACEHOLDER, (m) => {
              roles.push(m === '?' ? bound[next++] : 1);
              return '?';
            })
          : built;
      if (this.placeholder(0) !== '?') roles.push(...bound);
      if (sql.includes(String(MARK_A)) || sql.includes(MARK_VALUE) || sql.includes(MARK_B)) throw new Error(`posts page query kept a marker: ${built}`);
      if (anchor && !roles.includes(1)) throw new Error(`posts page query lost its keyset: ${built}`);
      c = { sql, roles };
      // Shapes are few (2 scopes × 3 directions × the limits in use); the bound only guards against a bug.
      if (this.compiled.size < 1000) this.compiled.set(key, c);
    }
    const [a, b] = anchor ? keysetOf(anchor) : [undefined, undefined];
    const values = [value, a, b];
    return this.runPage(
      c.sql,
      c.roles.map((r) => values[r]),
    );
  }

  /** Runs a page statement of `page` (its SQL is one of a few, built once) and maps its rows: on the driver, rows as arrays. */
  protected abstract runPage(sql: string, params: unknown[]): Promise<PostListItem[]>;

  /** Where each `p_<column>` sits in a raw row of a page statement, by SQL text (the same on every connection). */
  private readonly rawColumns = new Map<string, (keyof PostPageRow)[]>();

  /** Raw rows (arrays) of a page statement as list items; `names` gives the statement's column names the first time. */
  protected fromRaw(sql: string, rows: unknown[][], names: () => string[]): PostListItem[] {
    let cols = this.rawColumns.get(sql);
    if (!cols) this.rawColumns.set(sql, (cols = names() as (keyof PostPageRow)[]));
    const out: PostListItem[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const values = rows[i];
      const row = {} as Record<keyof PostPageRow, unknown>;
      for (let j = 0; j < cols.length; j++) row[cols[j]] = values[j];
      out[i] = toPostListItem(row as unknown as PostPageRow);
    }
    return out;
  }

  pageQuery(scope: PostScope, value: string, req: PageRequest): SelectQueryBuilder<PostEntity> {
    const qb = this.ds
      .getRepository(PostEntity)
      .createQueryBuilder('p')
      .select(POST_LIST_FIELDS.map((f) => `p.${f}`))
      .where(`p.${scope} = :value`, { value });
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

  async findByIds(ids: readonly string[]): Promise<PostEntity[]> {
    const out: PostEntity[] = [];
    for (let i = 0; i < ids.length; i += UPSERT_CHUNK) out.push(...(await this.ds.getRepository(PostEntity).findBy({ id: In(ids.slice(i, i + UPSERT_CHUNK)) })));
    return out;
  }

  async purge(ids: readonly string[]): Promise<number> {
    let n = 0;
    for (let i = 0; i < ids.length; i += UPSERT_CHUNK) {
      const chunk = ids.slice(i, i + UPSERT_CHUNK);
      n += await this.changes(`DELETE FROM posts WHERE id IN (${this.placeholders(0, chunk.length)})`, chunk);
    }
    return n;
  }

  async anonymise(ids: readonly string[]): Promise<number> {
    let n = 0;
    for (let i = 0; i < ids.length; i += UPSERT_CHUNK) {
      const chunk = ids.slice(i, i + UPSERT_CHUNK);
      n += await this.changes(
        `UPDATE posts SET author = ${this.placeholder(0)}, author_key = ${this.placeholder(1)} WHERE author <> ${this.placeholder(2)} AND id IN (${this.placeholders(3, chunk.length)})`,
        [DELETED_AUTHOR, DELETED_AUTHOR, DELETED_AUTHOR, ...chunk],
      );
    }
    return n;
  }

  history(subreddit: string, createdFrom: Date): Promise<PostEntity[]> {
    return this.ds.getRepository(PostEntity).find({
      where: { subreddit, createdAt: MoreThanOrEqual(createdFrom) },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  async purgeCreatedBefore(before: number, limit: number): Promise<number> {
    // Through the (subreddit, created_at, id) index would need a subreddit; a bounded batch by id keeps each statement short.
    return this.changes(
      `DELETE FROM posts WHERE id IN (SELECT id FROM posts WHERE created_at < ${this.placeholder(0)} ORDER BY created_at LIMIT ${this.placeholder(1)})`,
      [before, limit],
    );
  }

  /** Rows a DELETE or UPDATE changed (TypeORM's structured result, on both drivers). */
  private async changes(sql: string, params: unknown[]): Promise<number> {
    const qr = this.ds.createQueryRunner();
    try {
      const res = await qr.query(sql, params, true);
      return Number(res.affected ?? 0);
    } finally {
      await qr.release();
    }
  }

  private placeholders(offset: number, n: number): string {
    return Array.from({ length: n }, (_, i) => this.placeholder(offset + i)).join(', ');
  }
}

interface CompiledPage {
  sql: string;
  /** For each parameter of `sql`: 0 the scope value, 1 the keyset's created_at, 2 its id. */
  roles: number[];
}

// Markers no real value can equal: a scope value with a NUL, a created_at before 1690.
const MARK_VALUE = '\u0000scope';
const MARK_A = -8_888_888_888_888;
const MARK_B = '\u0000id';
const MARK_A_OR_PLACEHOLDER = new RegExp(`\\?|${String(MARK_A)}(?![0-9])`, 'g');

/** A row of `pageQuery` as the driver answers it (TypeORM's `p_<column>` aliases). */
export interface PostPageRow {
  p_id: string;
  p_subreddit: string;
  p_author: string;
  p_title: string;
  p_selftext: string;
  p_url: string;
  p_permalink: string;
  p_score: number | string;
  p_num_comments: number | string;
  // BIGINT: a string from pg, a number from SQLite.
  p_created_at: number | string;
}

export function toPostListItem(r: PostPageRow): PostListItem {
  return {
    id: r.p_id,
    subreddit: r.p_subreddit,
    author: r.p_author,
    title: r.p_title,
    selftext: r.p_selftext,
    url: r.p_url,
    permalink: r.p_permalink,
    score: Number(r.p_score),
    numComments: Number(r.p_num_comments),
    createdAt: new Date(Number(r.p_created_at)),
  };
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
