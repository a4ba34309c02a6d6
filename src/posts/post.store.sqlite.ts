import { Injectable } from '@nestjs/common';
import type { PostEntity } from './post.entity';
import { PostPageRow, toPostEntity, TypeOrmPostStore } from './post.store.typeorm';

/** The better-sqlite3 handle TypeORM's driver holds (its connection, the same for every query). */
interface SqliteHandle {
  prepare(sql: string): SqliteStatement;
}
interface SqliteStatement {
  raw(on: boolean): SqliteStatement;
  columns(): { name: string }[];
  all(...params: unknown[]): unknown[][];
}
/** A page statement in raw mode (rows as arrays), with where each `p_<column>` sits in a row. */
interface PageStatement {
  stmt: SqliteStatement;
  names: (keyof PostPageRow)[];
}

@Injectable()
export class SqlitePostStore extends TypeOrmPostStore {
  // Per connection (a data source destroyed and initialised again has a new handle), per SQL text.
  private readonly statements = new WeakMap<object, Map<string, PageStatement>>();

  protected placeholder(): string {
    return '?';
  }

  /**
   * The page statement straight on better-sqlite3's handle, prepared once, rows as arrays: the
   * same SQL and rows as through TypeORM's query runner, without a runner, its events and an
   * object of 13 aliased keys per row on every request (the webhooks list does the same).
   * Errors are better-sqlite3's own (SQLITE_BUSY …), which the database-unavailable classifier
   * reads as it reads TypeORM's wrapped ones.
   */
  protected override async runPage(sql: string, params: unknown[]): Promise<PostEntity[]> {
    const { stmt, names } = this.statement(sql);
    const rows = stmt.all(...params);
    const out: PostEntity[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const values = rows[i];
      const row = {} as Record<keyof PostPageRow, unknown>;
      for (let j = 0; j < names.length; j++) row[names[j]] = values[j];
      out[i] = toPostEntity(row as unknown as PostPageRow);
    }
    return out;
  }

  private statement(sql: string): PageStatement {
    const handle = (this.ds.driver as unknown as { databaseConnection: SqliteHandle }).databaseConnection;
    let bySql = this.statements.get(handle);
    if (!bySql) this.statements.set(handle, (bySql = new Map()));
    let s = bySql.get(sql);
    if (!s) {
      const stmt = handle.prepare(sql).raw(true);
      s = { stmt, names: stmt.columns().map((c) => c.name as keyof PostPageRow) };
      bySql.set(sql, s);
    }
    return s;
  }
}
