import { Injectable } from '@nestjs/common';
import { InjectTrendhooksDataSource } from '../../database/data-source.token';
import { DataSource } from 'typeorm';
import type { SourceRecord } from '../coverage';
import { ClaimResult, PollOutcome, sourceRecord, sourceState, TrendSourceLeaseStore } from './trend-source-lease.store';

/** An UPDATE through TypeORM's postgres driver answers [rows, affected count]. */
type UpdateResult<R = unknown> = [R[], number];

@Injectable()
export class PostgresTrendSourceLeaseStore extends TrendSourceLeaseStore {
  constructor(@InjectTrendhooksDataSource() private readonly ds: DataSource) {
    super();
  }

  async claim(subreddit: string, owner: string, now: number, leaseUntil: number, strangerFrom: number): Promise<ClaimResult> {
    await this.ds.query('INSERT INTO trend_sources (subreddit, consecutive_failures, updated_at) VALUES ($1, 0, $2) ON CONFLICT (subreddit) DO NOTHING', [subreddit, now]);
    // One statement: PostgreSQL re-checks the WHERE on the row's newest version after any
    // concurrent claim commits, so of two racing pollers exactly one gets a row back.
    const res = (await this.ds.query(
      `UPDATE trend_sources SET lease_owner = $1, lease_until = $2, updated_at = $3
       WHERE subreddit = $4 AND (lease_until IS NULL OR lease_until < $3) AND (next_poll_at IS NULL OR next_poll_at <= $3)
         AND (lease_owner IS NULL OR lease_owner = $1 OR next_poll_at IS NULL OR next_poll_at <= $5)
       RETURNING consecutive_failures, last_error, last_polled_at`,
      [owner, leaseUntil, now, subreddit, strangerFrom],
    )) as UpdateResult<{ consecutive_failures: unknown; last_error: string | null; last_polled_at: unknown }>;
    const row = res[0][0];
    if (row) {
      return { claimed: true, consecutiveFailures: Number(row.consecutive_failures), lastError: row.last_error, lastPolledAt: row.last_polled_at === null ? null : Number(row.last_polled_at) };
    }
    const rows = (await this.ds.query('SELECT lease_owner, lease_until, next_poll_at FROM trend_sources WHERE subreddit = $1', [subreddit])) as Record<string, unknown>[];
    return { claimed: false, state: sourceState(rows[0]) };
  }

  async renew(subreddit: string, owner: string, leaseUntil: number, now: number): Promise<boolean> {
    const res = (await this.ds.query(
      'UPDATE trend_sources SET lease_until = $1, updated_at = $2 WHERE subreddit = $3 AND lease_owner = $4 AND lease_until IS NOT NULL',
      [leaseUntil, now, subreddit, owner],
    )) as UpdateResult;
    return res[1] === 1;
  }

  async finish(subreddit: string, owner: string, o: PollOutcome, now: number): Promise<boolean> {
    const res = (await (o.ok
      ? this.ds.query(
          `UPDATE trend_sources SET lease_until = NULL, next_poll_at = $1, last_polled_at = $5, last_error = NULL, consecutive_failures = 0,
           posts_unreachable = posts_unreachable + $6, updated_at = $2
           WHERE subreddit = $3 AND lease_owner = $4 AND lease_until IS NOT NULL`,
          [o.nextPollAt, now, subreddit, owner, o.listedAt ?? now, o.unreachable ?? 0],
        )
      : this.ds.query(
          `UPDATE trend_sources SET lease_until = NULL, next_poll_at = $1, last_error = $2, consecutive_failures = $3, updated_at = $4
           WHERE subreddit = $5 AND lease_owner = $6 AND lease_until IS NOT NULL`,
          [o.nextPollAt, o.lastError, o.consecutiveFailures, now, subreddit, owner],
        ))) as UpdateResult;
    return res[1] === 1;
  }

  async releaseAll(owner: string, now: number): Promise<void> {
    await this.ds.query('UPDATE trend_sources SET lease_owner = NULL, lease_until = NULL, updated_at = $1 WHERE lease_owner = $2', [now, owner]);
  }

  async sources(subreddits: readonly string[]): Promise<Map<string, SourceRecord>> {
    const rows = (await this.ds.query(
      'SELECT subreddit, last_polled_at, last_error, consecutive_failures, next_poll_at, posts_unreachable FROM trend_sources WHERE subreddit = ANY($1::varchar[])',
      [subreddits],
    )) as (Record<string, unknown> & { subreddit: string })[];
    return new Map(rows.map((r) => [r.subreddit, sourceRecord(r)]));
  }
}
