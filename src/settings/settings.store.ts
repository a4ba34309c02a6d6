import { Injectable, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InjectTrendhooksDataSource } from '../database/data-source.token';
import { dialectOf, SQL_PARAMETER, type Dialect } from '../database/dialect';
import { SettingEntity } from './setting.entity';

/** A settings row. */
export interface Setting {
  key: string;
  value: string;
}

/**
 * The one owner of the `settings` table: small values trendhooks generates once and keeps (the
 * cursor secret, the key ring's key check values). Other modules ask it, never its SQL. The table
 * is the optional `settings` feature: a host database may not have it (`exists()`); every other
 * method then fails as the driver does (no such table).
 */
@Injectable()
export class SettingsStore implements OnModuleInit {
  constructor(@InjectTrendhooksDataSource() private readonly ds: DataSource) {}

  /** An unsupported driver is refused at boot, never run as SQLite. */
  onModuleInit(): void {
    dialectOf(this.ds);
  }

  /** This data source's dialect (refused when unsupported). */
  private get dialect(): Dialect {
    return dialectOf(this.ds);
  }

  private get repo() {
    return this.ds.getRepository(SettingEntity);
  }

  /** Whether this database has the table (a host may leave the `settings` feature out). */
  async exists(): Promise<boolean> {
    const rows: unknown[] = await this.ds.query(TABLE_EXISTS[this.dialect]);
    return rows.length > 0;
  }

  /** The value under `key`, or null. */
  async get(key: string): Promise<string | null> {
    return (await this.repo.findOneBy({ key }))?.value ?? null;
  }

  /**
   * Stores `value` under `key` unless the key already has one (several processes may race: the
   * first wins). Plain SQL: the key ring's startup check writes here on a host connection whatever
   * entities it maps.
   */
  async insertIfAbsent(key: string, value: string): Promise<void> {
    await this.ds.query(`INSERT INTO settings ("key", "value") VALUES (${this.param(0)}, ${this.param(1)}) ON CONFLICT DO NOTHING`, [key, value]);
  }

  /** Compare-and-set: `value` replaces `expected` under `key`, only if it is still that. True when it did. */
  async replace(key: string, expected: string, value: string): Promise<boolean> {
    const res = await this.repo.update({ key, value: expected }, { value });
    return (res.affected ?? 0) > 0;
  }

  /**
   * Up to `limit` rows whose value matches the LIKE pattern `like` and none of `notLike`
   * (backslash escapes `%`, `_` and itself), in no particular order: the key ring's startup check
   * samples the values under each key id with it.
   */
  async valuesLike(like: string, notLike: readonly string[], limit: number): Promise<Setting[]> {
    const where = [`value LIKE ${this.param(0)} ESCAPE '\\'`, ...notLike.map((_, i) => `value NOT LIKE ${this.param(i + 1)} ESCAPE '\\'`)].join(' AND ');
    const lim = Math.max(0, Math.floor(limit));
    return this.ds.query(`SELECT "key" AS "key", "value" AS "value" FROM settings WHERE ${where} LIMIT ${lim}`, [like, ...notLike]);
  }

  private param(i: number): string {
    return SQL_PARAMETER[this.dialect](i);
  }
}

/** Whether the `settings` table exists, per dialect. */
const TABLE_EXISTS: Record<Dialect, string> = {
  sqlite: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'settings'",
  postgres: "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'settings'",
};
