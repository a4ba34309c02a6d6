import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { dialectOf, sqliteHandle } from '../../database/data-source';

/** A subreddit's row as a failed claim sees it: enough to tell when to try again. */
export interface SourceState {
  leaseOwner: string | null;
  leaseUntil: number | null;
  nextPollAt: number | null;
}

export type ClaimResult =
  | { claimed: true; consecutiveFailures: number; lastError: string | null }
  | { claimed: false; state: SourceState | null };

/** How a poll ended, written back under the lease. */
export interface PollOutcome {
  ok: boolean;
  nextPollAt: number;
  lastError: string | null;
  consecutiveFailures: number;
}

type Row = Record<string, unknown>;
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * The poller's SQL: leases on `trend_sources`, plus the two reads a poll needs (tracked
 * subreddits, posts to re-read). A lease is taken by one conditional UPDATE, so two pollers on one
 * PostgreSQL database can never hold the same subreddit at once. On SQLite each multi-statement
 * write is one synchronous better-sqlite3 transaction (TypeORM shares a single connection there).
 */
@Injectable()
export class TrendSourceRepository {
  private readonly pg: boolean;
  private stmts?: ReturnType<TrendSourceRepository['prepareSqlite']>;

  constructor(@InjectDataSource() private readonly ds: DataSource) {
    this.pg = dialectOf(ds) === 'postgres';
  }

  private get sqlite(): SqliteDatabase {
    return sqliteHandle(this.ds);
  }

  private prepareSqlite() {
    const db = this.sqlite;
    return {
      insert: db.prepare('INSERT INTO trend_sources (subreddit, consecutive_failures, updated_at) VALUES (?, 0, ?) ON CONFLICT (subreddit) DO NOTHING'),
      claim: db.prepare(
        `UPDATE trend_sources SET lease_owner = @owner, lease_until = @until, updated_at = @now
         WHERE subreddit = @sub AND (lease_until IS NULL OR lease_until < @now) AND (next_poll_at IS NULL OR next_poll_at <= @now)
           AND (lease_owner IS NULL OR lease_owner = @owner OR next_poll_at IS NULL OR next_poll_at <= @strangerFrom)
         RETURNING consecutive_failures, last_error`,
      ),
      state: db.prepare('SELECT lease_owner, lease_until, next_poll_at FROM trend_sources WHERE subreddit = ?'),
      renew: db.prepare('UPDATE trend_sources SET lease_until = ?, updated_at = ? WHERE subreddit = ? AND lease_owner = ? AND lease_until IS NOT NULL'),
      finishOk: db.prepare(
        `UPDATE trend_sources SET lease_until = NULL, next_poll_at = ?, last_polled_at = ?, last_error = NULL, consecutive_failures = 0, updated_at = ?
         WHERE subreddit = ? AND lease_owner = ? AND lease_until IS NOT NULL`,
      ),
      finishFailed: db.prepare(
        `UPDATE trend_sources SET lease_until = NULL, next_poll_at = ?, last_error = ?, consecutive_failures = ?, updated_at = ?
         WHERE subreddit = ? AND lease_owner = ? AND lease_until IS NOT NULL`,
      ),
      releaseAll: db.prepare('UPDATE trend_sources SET lease_owner = NULL, lease_until = NULL, updated_at = ? WHERE lease_owner = ?'),
      tracked: db.prepare('SELECT DISTINCT subreddit FROM webhooks'),
      reread: db.prepare('SELECT id FROM posts WHERE subreddit = ? AND created_at >= ? AND updated_at < ? ORDER BY created_at DESC, id DESC LIMIT ?'),
    };
  }

  private get sq() {
    this.stmts ??= this.prepareSqlite();
    return this.stmts;
  }

  /**
   * Leases `subreddit` to `owner` until `leaseUntil` when it is free and due, creating its row on
   * first sight. `strangerFrom`: another process's last poll keeps the subreddit for it until then
   * (its next_poll_at + a grace), so one pipeline's detectors keep seeing the subreddit while that
   * process lives.
   */
  async claim(subreddit: string, owner: string, now: number, leaseUntil: number, strangerFrom: number): Promise<ClaimResult> {
    type Claimed = { consecutive_failures: unknown; last_error: string | null };
    if (!this.pg) {
      const s = this.sq;
      return this.sqlite.transaction((): ClaimResult => {
        s.insert.run(subreddit, now);
        const row = s.claim.get({ owner, until: leaseUntil, now, sub: subreddit, strangerFrom }) as Claimed | undefined;
        if (row) return { claimed: true, consecutiveFailures: Number(row.consecutive_failures), lastError: row.last_error };
        return { claimed: false, state: toState(s.state.get(subreddit) as Row | undefined) };
      })();
    }
    await this.ds.query('INSERT INTO trend_sources (subreddit, consecutive_failures, updated_at) VALUES ($1, 0, $2) ON CONFLICT (subreddit) DO NOTHING', [subreddit, now]);
    // One statement: PostgreSQL re-checks the WHERE on the row's newest version after any
    // concurrent claim commits, so of two racing pollers exactly one gets a row back.
    const res = (await this.ds.query(
      `UPDATE trend_sources SET lease_owner = $1, lease_until = $2, updated_at = $3
       WHERE subreddit = $4 AND (lease_until IS NULL OR lease_until < $3) AND (next_poll_at IS NULL OR next_poll_at <= $3)
         AND (lease_owner IS NULL OR lease_owner = $1 OR next_poll_at IS NULL OR next_poll_at <= $5)
       RETURNING consecutive_failures, last_error`,
      [owner, leaseUntil, now, subreddit, strangerFrom],
    )) as [Claimed[], number];
    const row = res[0][0];
    if (row) return { claimed: true, consecutiveFailures: Number(row.consecutive_failures), lastError: row.last_error };
    const rows = (await this.ds.query('SELECT lease_owner, lease_until, next_poll_at FROM trend_sources WHERE subreddit = $1', [subreddit])) as Row[];
    return { claimed: false, state: toState(rows[0]) };
  }

  /** Extends a held lease; false when it was lost (another process took the subreddit over). */
  async renew(subreddit: string, owner: string, leaseUntil: number, now: number): Promise<boolean> {
    if (!this.pg) return this.sq.renew.run(leaseUntil, now, subreddit, owner).changes === 1;
    const res = (await this.ds.query(
      'UPDATE trend_sources SET lease_until = $1, updated_at = $2 WHERE subreddit = $3 AND lease_owner = $4 AND lease_until IS NOT NULL',
      [leaseUntil, now, subreddit, owner],
    )) as [unknown[], number];
    return res[1] === 1;
  }

  /** Records the poll's outcome and releases the lease (the owner stays, as the last poller). False when the lease was lost. */
  async finish(subreddit: string, owner: string, o: PollOutcome, now: number): Promise<boolean> {
    if (!this.pg) {
      const r = o.ok
        ? this.sq.finishOk.run(o.nextPollAt, now, now, subreddit, owner)
        : this.sq.finishFailed.run(o.nextPollAt, o.lastError, o.consecutiveFailures, now, subreddit, owner);
      return r.changes === 1;
    }
    const res = (await (o.ok
      ? this.ds.query(
          `UPDATE trend_sources SET lease_until = NULL, next_poll_at = $1, last_polled_at = $2, last_error = NULL, consecutive_failures = 0, updated_at = $2
           WHERE subreddit = $3 AND lease_owner = $4 AND lease_until IS NOT NULL`,
          [o.nextPollAt, now, subreddit, owner],
        )
      : this.ds.query(
          `UPDATE trend_sources SET lease_until = NULL, next_poll_at = $1, last_error = $2, consecutive_failures = $3, updated_at = $4
           WHERE subreddit = $5 AND lease_owner = $6 AND lease_until IS NOT NULL`,
          [o.nextPollAt, o.lastError, o.consecutiveFailures, now, subreddit, owner],
        ))) as [unknown[], number];
    return res[1] === 1;
  }

  /** A stopping poller gives up its leases and its claim to be the next poller, so others take over at once. */
  async releaseAll(owner: string, now: number): Promise<void> {
    if (!this.pg) {
      this.sq.releaseAll.run(now, owner);
      return;
    }
    await this.ds.query('UPDATE trend_sources SET lease_owner = NULL, lease_until = NULL, updated_at = $1 WHERE lease_owner = $2', [now, owner]);
  }

  /** Every subreddit a webhook subscribes to. */
  async webhookSubreddits(): Promise<string[]> {
    const rows = (this.pg ? await this.ds.query('SELECT DISTINCT subreddit FROM webhooks') : this.sq.tracked.all()) as { subreddit: string }[];
    return rows.map((r) => r.subreddit);
  }

  /**
   * Ids of the subreddit's stored posts created at or after `createdFrom` and last seen before
   * `seenBefore`, newest first: the ones worth re-reading for growth.
   */
  async postsToReread(subreddit: string, createdFrom: number, seenBefore: number, limit: number): Promise<string[]> {
    const rows = (
      this.pg
        ? await this.ds.query(
            'SELECT id FROM posts WHERE subreddit = $1 AND created_at >= $2 AND updated_at < $3 ORDER BY created_at DESC, id DESC LIMIT $4',
            [subreddit, createdFrom, seenBefore, limit],
          )
        : this.sq.reread.all(subreddit, createdFrom, seenBefore, limit)
    ) as { id: string }[];
    return rows.map((r) => r.id);
  }
}

function toState(row: Row | undefined): SourceState | null {
  if (!row) return null;
  return { leaseOwner: (row.lease_owner as string | null) ?? null, leaseUntil: num(row.lease_until), nextPollAt: num(row.next_poll_at) };
}
