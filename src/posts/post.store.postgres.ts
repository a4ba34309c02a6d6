import { Injectable } from '@nestjs/common';
import { pgPool } from '../database/data-source';
import type { PostListItem } from './post.store';
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
}
