import { Column, Entity, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../database/columns';

/**
 * One polled subreddit: its poll lease and schedule, shared by every poller process on the
 * database, so two processes never poll the same subreddit at once (see src/trends/README.md).
 */
@Entity('trend_sources')
export class TrendSourceEntity {
  /** Lower-cased subreddit name. */
  @PrimaryColumn({ type: 'varchar', length: 21 })
  subreddit: string;

  /**
   * The process holding the lease while `lease_until` is set; after a normal release, the process
   * that polled last (it gets the next poll first, so one pipeline keeps seeing the subreddit).
   */
  @Column({ type: 'varchar', length: 64, name: 'lease_owner', nullable: true })
  leaseOwner: string | null;

  /** Lease expiry; null when released. A crashed poller's lease simply runs out. */
  @TimestampColumn({ name: 'lease_until', nullable: true })
  leaseUntil: Date | null;

  /** Not polled again before this (the interval, or a backoff after failures). */
  @TimestampColumn({ name: 'next_poll_at', nullable: true })
  nextPollAt: Date | null;

  /** When the last successful poll's listing started: the next listing pages back to it. */
  @TimestampColumn({ name: 'last_polled_at', nullable: true })
  lastPolledAt: Date | null;

  /** Error class of the last poll (`http_503`, `unavailable_404`, …); null after a success. */
  @Column({ type: 'varchar', length: 300, name: 'last_error', nullable: true })
  lastError: string | null;

  @Column({ type: 'integer', name: 'consecutive_failures', default: 0 })
  consecutiveFailures: number;

  /** Posts estimated lost, all told, behind Reddit's 1,000-item listing cap after gaps in the reads. */
  @Column({ type: 'integer', name: 'posts_unreachable', default: 0 })
  postsUnreachable: number;

  @TimestampColumn({ name: 'updated_at' })
  updatedAt: Date;
}
