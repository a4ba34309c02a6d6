import { Entity, PrimaryColumn, Column, Index } from 'typeorm';
import { TimestampColumn } from '../database/columns';

/**
 * `held`: its webhook was paused by hand (PATCH `disabled: true`); never claimed (claims read
 * `pending` rows only) until resuming makes it `pending` again.
 */
export type DeliveryState = 'pending' | 'delivering' | 'delivered' | 'failed' | 'cancelled' | 'held';

/** One event for one webhook. The id is deterministic (msg_…), so a second fan-out of an event is a no-op. */
@Entity('deliveries')
// Claims scan due rows in time order.
@Index('idx_deliveries_due', ['state', 'nextAttemptAt'])
// A webhook's delivery log, newest first (keyset over created_at, id).
@Index('idx_deliveries_webhook_created', ['webhookId', 'createdAt', 'id'])
// No unique index on (event_id, webhook_id): the id is derived from that pair (deliveryId), so the
// primary key already makes a second fan-out of an event a no-op; a second unique index only cost
// PostgreSQL one more entry to write per insert and per (never HOT) claim or outcome update.
// SQLite alone reads deliveries by event (a replay's FAN_OUT_AT): its migrations create this index
// on (event_id), PostgreSQL's do not. `synchronize: false` (no columns, TypeORM's form for an
// index it must leave alone) keeps the drift check from asking for it on either;
// test/stores/delivery-indexes.e2e-spec.ts checks what each database has.
@Index('idx_deliveries_event', { synchronize: false })
export class DeliveryEntity {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  @Column({ type: 'varchar', length: 64, name: 'event_id' })
  eventId: string;

  @Column({ type: 'varchar', length: 26, name: 'webhook_id' })
  webhookId: string;

  @Column({ type: 'varchar', length: 40, name: 'customer_id' })
  customerId: string;

  @Column({ type: 'varchar', length: 16 })
  state: DeliveryState;

  /** Attempts made so far. */
  @Column({ type: 'integer', default: 0 })
  attempts: number;

  /**
   * When the delivery is next due. While `delivering` it is the lease expiry: a worker that dies
   * mid-send leaves a row that simply becomes due again, so one index serves claims and recovery.
   * Null once delivered, failed or cancelled, and while held.
   */
  @TimestampColumn({ name: 'next_attempt_at', nullable: true })
  nextAttemptAt: Date | null;

  /** The worker holding the lease; every write after a send is fenced on it. */
  @Column({ type: 'varchar', length: 64, name: 'lease_owner', nullable: true })
  leaseOwner: string | null;

  @Column({ type: 'varchar', length: 300, name: 'last_error', nullable: true })
  lastError: string | null;

  @Column({ type: 'integer', name: 'last_response_code', nullable: true })
  lastResponseCode: number | null;

  @TimestampColumn({ name: 'created_at' })
  createdAt: Date;

  @TimestampColumn({ name: 'updated_at' })
  updatedAt: Date;

  @TimestampColumn({ name: 'delivered_at', nullable: true })
  deliveredAt: Date | null;
}
