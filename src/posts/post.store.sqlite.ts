import { Injectable } from '@nestjs/common';
import { rawStatement } from '../database/data-source';
import type { PostListItem } from './post.store';
import { PostPageRow, toPostListItem, TypeOrmPostStore } from './post.store.typeorm';

@Injectable()
export class SqlitePostStore extends TypeOrmPostStore {
  /** Where each `p_<column>` sits in a row of a page statement, by SQL text (the same on every connection). */
  private readonly columns = new Map<string, (keyof PostPageRow)[]>();

  protected placeholder(): string {
    return '?';
  }

  /**
   * The page statement straight on better-sqlite3's handle (rawStatement), rows as arrays: the
   * same SQL and rows as through TypeORM's query runner, without a runner, its events and an
   * object of 13 aliased keys per row on every request (the webhooks list does the same).
   */
  protected override async runPage(sql: string, params: unknown[]): Promise<PostListItem[]> {
    const stmt = rawStatement(this.ds, sql);
    let names = this.columns.get(sql);
    if (!names) this.columns.set(sql, (names = stmt.columns().map((c) => c.name as keyof PostPageRow)));
    const rows = stmt.all(...params);
    const out: PostListItem[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const values = rows[i];
      const row = {} as Record<keyof PostPageRow, unknown>;
      for (let j = 0; j < names.length; j++) row[names[j]] = values[j];
      out[i] = toPostListItem(row as unknown as PostPageRow);
    }
    return out;
  }
}
