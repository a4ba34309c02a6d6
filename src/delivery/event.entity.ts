import { Entity, PrimaryColumn, Column, Index } from 'typeorm';
import { TimestampColumn } from '../database/columns';

/** A trend event (or a test event: `evt_test_…`, see events/test-event.ts), written once; its deliveries are fanned out in the same transaction. */
@Entity('events')
@Index('idx_events_subreddit_created', ['subreddit', 'createdAt'])
// One subscription's events in time order (recover's scan, the events history's pages): a range of
// this index, the id as the keyset's tie-breaker.
@Index('idx_events_type_subreddit_created', ['type', 'subreddit', 'createdAt', 'id'])
export class EventEntity {
  /** `evt_…`: a ULID for ad-hoc events, or derived from (subreddit, kind, window, key) by the trend pipeline. */
  @PrimaryColumn({ type: 'varchar', length: 64 })
  id: string;

  @Column({ type: 'varchar', length: 32 })
  type: string;

  @Column({ type: 'varchar', length: 21 })
  subreddit: string;

  /** The event's figures (JSON text): they become `data` of the delivery body. */
  @Column({ type: 'text' })
  payload: string;

  @TimestampColumn({ name: 'created_at' })
  createdAt: Date;
}
