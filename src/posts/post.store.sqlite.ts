import { Injectable } from '@nestjs/common';
import { rawStatement } from '../database/data-source';
import type { PostListItem } from './post.store';
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
}
