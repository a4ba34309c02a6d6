import { Injectable } from '@nestjs/common';
import { InjectTrendhooksDataSource } from '../../database/data-source.token';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { sqliteHandle, StatementsPerHandle } from '../../database/data-source';
import type { SourceRecord } from '../coverage';
import { ClaimResult, PollOutcome, sourceRecord, sourceState, TrendSourceLeaseStore } from './trend-source-lease.store';

function prepare(db: SqliteDatabase) {
  return {
    insert: db.prepare('INSERT INTO trend_sources (subreddit, consecutive_failures, updated_at) VALUES (?, 0, ?) ON CONFLICT (subreddit) DO NOTHING'),
    claim: db.prepare(
      `UPDATE trend_sources SET lease_owner = @owner, lease_until = @until, updated_at = @now
       WHERE subreddit = @sub AND (lease_until IS NULL OR lease_until < @now) AND (next_poll_at IS NULL OR next_poll_at <= @now)
         AND (lease_owner IS NULL OR lease_owner = @owner OR next_poll_at IS NULL OR next_poll_at <= @strangerFrom)
       RETURNING consecutive_failures, last_error, last_polled_at`,
    ),
    state: db.prepare('SELECT lease_owner, lease_until, next_poll_at FROM trend_sources WHERE subreddit = ?'),
    renew: db.prepare('UPDATE trend_sources SET lease_until = ?, updated_at = ? WHERE subreddit = ? AND lease_owner = ? AND lease_until IS NOT NULL'),
    finishOk: db.prepare(
      `UPDATE trend_sources SET lease_until = NULL, next_poll_at = ?, last_polled_at = ?, last_error = NULL, consecutive_failures = 0,
       posts_unreachable = posts_unreachable + ?, updated_at = ?
       WHERE subreddit = ? AND lease_owner = ? AND lease_until IS NOT NULL`,
    ),
    finishFailed: db.prepare(
      `UPDATE trend_sources SET lease_until = NULL, next_poll_at = ?, last_error = ?, consecutive_failures = ?, updated_at = ?
       WHERE subreddit = ? AND lease_owner = ? AND lease_until IS NOT NULL`,
    ),
    releaseAll: db.prepare('UPDATE trend_sources SET lease_owner = NULL, lease_until = NULL, updated_at = ? WHERE lease_owner = ?'),
    sources: db.prepare(
      'SELECT subreddit, last_polled_at, last_error, consecutive_failures, next_poll_at, posts_unreachable FROM trend_sources WHERE subreddit IN (SELECT value FROM json_each(?))',
    ),
  };
}

/**
 * Statements prepared once on the better-sqlite3 handle; the claim (insert + conditional update +
 * read) is one synchronous transaction, since TypeORM shares a single connection there.
 */
@Injectable()
export class SqliteTrendSourceLeaseStore extends TrendSourceLeaseStore {
  /** Prepared once per connection (see StatementsPerHandle). */
  private readonly statements: StatementsPerHandle<ReturnType<typeof prepare>>;

  constructor(@InjectTrendhooksDataSource() private readonly ds: DataSource) {
    super();
    this.statements = new StatementsPerHandle(ds, prepare);
  }

  private get sqlite(): SqliteDatabase {
    return sqliteHandle(this.ds);
  }

  private get sq() {
    return this.statements.get();
  }

  async claim(subreddit: string, owner: string, now: number, leaseUntil: number, strangerFrom: number): Promise<ClaimResult> {
    const s = this.sq;
    // IMMEDIATE: takes the write lock up front; a deferred transaction that read before writing
    // would fail at once (SQLITE_BUSY) while another process holds it, instead of waiting.
    return this.sqlite.transaction((): ClaimResult => {
      s.insert.run(subreddit, now);
      const row = s.claim.get({ owner, until: leaseUntil, now, sub: subreddit, strangerFrom }) as
        | { consecutive_failures: unknown; last_error: string | null; last_polled_at: unknown }
        | undefined;
      if (row) return { claimed: true, consecutiveFailures: Number(row.consecutive_failures), lastError: row.last_error, lastPolledAt: row.last_polled_at === null ? null : Number(row.last_polled_at) };
      return { claimed: false, state: sourceState(s.state.get(subreddit) as Record<string, unknown> | undefined) };
    }).immediate();
  }

  async renew(subreddit: string, owner: string, leaseUntil: number, now: number): Promise<boolean> {
    return this.sq.renew.run(leaseUntil, now, subreddit, owner).changes === 1;
  }

  async finish(subreddit: string, owner: string, o: PollOutcome, now: number): Promise<boolean> {
    const r = o.ok
      ? this.sq.finishOk.run(o.nextPollAt, o.listedAt ?? now, o.unreachable ?? 0, now, subreddit, owner)
      : this.sq.finishFailed.run(o.nextPollAt, o.lastError, o.consecutiveFailures, now, subreddit, owner);
    return r.changes === 1;
  }

  async releaseAll(owner: string, now: number): Promise<void> {
    this.sq.releaseAll.run(now, owner);
  }

  async sources(subreddits: readonly string[]): Promise<Map<string, SourceRecord>> {
    const rows = this.sq.sources.all(JSON.stringify(subreddits)) as (Record<string, unknown> & { subreddit: string })[];
    return new Map(rows.map((r) => [r.subreddit, sourceRecord(r)]));
  }
}
