import { Injectable } from '@nestjs/common';
import { pgPool } from '../database/data-source';
import { PostListItem, subredditPostCounts, SubredditPostCounts } from './post.store';
import { TypeOrmPostStore } from './post.store.typeorm';

@Injectable()
export class PostgresPostStore extends TypeOrmPostStore {
  protected placeholder(i: number): string {
    return `$${i + 1}`;
  }

  /**
   * The page statement straight on node-postgres' pool, rows as arrays: the same SQL and rows as
   * through TypeORM's query runner, without a runner per call nor a keyed object per row (the
   * SQLite store does the same). Errors are node-postgres' own, which the database-unavailable
   * classifier reads as TypeORM's wrapped ones.
   */
  protected async runPage(sql: string, params: unknown[]): Promise<PostListItem[]> {
    const res = await pgPool(this.ds).query<unknown[]>({ text: sql, values: params, rowMode: 'array' });
    return this.fromRaw(sql, res.rows, () => res.fields.map((f) => f.name));
  }

  async rereadCandidates(subreddits: readonly string[], createdFrom: number, seenBefore: number, limit: number): Promise<string[]> {
    const rows = (await this.ds.query(
      'SELECT id FROM posts WHERE subreddit = ANY($1::varchar[]) AND created_at >= $2 AND updated_at < $3 ORDER BY created_at DESC, id DESC LIMIT $4',
      [subreddits, createdFrom, seenBefore, limit],
    )) as { id: string }[];
    return rows.map((r) => r.id);
  }

  async countsSince(subreddits: readonly string[], since: number): Promise<SubredditPostCounts> {
    return subredditPostCounts(
      await this.ds.query('SELECT subreddit, COUNT(*) AS n, MIN(created_at) AS oldest, MAX(created_at) AS newest FROM posts WHERE subreddit = ANY($1::varchar[]) AND created_at >= $2 GROUP BY subreddit', [
        subreddits,
        since,
      ]),
    );
  }
}
