import { Injectable } from '@nestjs/common';
import { rawStatement } from '../database/data-source';
import { PostListItem, subredditPostCounts, SubredditPostCounts } from './post.store';
import { TypeOrmPostStore } from './post.store.typeorm';

@Injectable()
export class SqlitePostStore extends TypeOrmPostStore {
  protected placeholder(): string {
    return '?';
  }

  /**
   * The page statement straight on better-sqlite3's handle (rawStatement), rows as arrays: the
   * same SQL and rows as through TypeORM's query runner, without a runner, its events and an
   * object of aliased keys per row on every request (the webhooks list does the same).
   */
  protected async runPage(sql: string, params: unknown[]): Promise<PostListItem[]> {
    const stmt = rawStatement(this.ds, sql);
    return this.fromRaw(sql, stmt.all(...params), () => stmt.columns().map((c) => c.name));
  }

  // A subreddit list is one JSON parameter (json_each), so each statement is prepared once whatever the list's length.
  async rereadCandidates(subreddits: readonly string[], createdFrom: number, seenBefore: number, limit: number): Promise<string[]> {
    const stmt = rawStatement(
      this.ds,
      'SELECT id FROM posts WHERE subreddit IN (SELECT value FROM json_each(?)) AND created_at >= ? AND updated_at < ? ORDER BY created_at DESC, id DESC LIMIT ?',
    );
    return (stmt.all(JSON.stringify(subreddits), createdFrom, seenBefore, limit) as [string][]).map((r) => r[0]);
  }

  async countsSince(subreddits: readonly string[], since: number): Promise<SubredditPostCounts> {
    const stmt = rawStatement(
      this.ds,
      'SELECT subreddit, COUNT(*) AS n, MIN(created_at) AS oldest, MAX(created_at) AS newest FROM posts WHERE subreddit IN (SELECT value FROM json_each(?)) AND created_at >= ? GROUP BY subreddit',
    );
    return subredditPostCounts((stmt.all(JSON.stringify(subreddits), since) as [string, unknown, unknown, unknown][]).map(([subreddit, n, oldest, newest]) => ({ subreddit, n, oldest, newest })));
  }
}
