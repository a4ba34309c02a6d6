import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../../database/columns';

export type OperationsNotificationState = 'pending' | 'sending' | 'sent' | 'failed';

/**
 * One `webhook.disabled` notification to the operators (OPERATIONS_WEBHOOK_URL), stored before it
 * is sent and retried like a delivery. A webhook gets at most one per hour (`slot_at`); the
 * disables in between are folded into the next one, which stays pending until its hour comes.
 */
@Entity('operations_notifications')
// Claims read due rows in time order; a `sending` row's next_attempt_at is its lease expiry.
@Index('idx_operations_notifications_due', ['state', 'nextAttemptAt'])
// A webhook's latest hour (where the next notification's hour starts).
@Index('idx_operations_notifications_webhook', ['webhookId', 'slotAt'])
// At most one notification per webhook still collecting disables (never tried yet).
@Index('uq_operations_notifications_open', ['webhookId'], { unique: true, where: "state = 'pending' AND attempts = 0" })
export class OperationsNotificationEntity {
  /** The `webhook-id` header (msg_…): the same on every attempt, derived from the webhook and its hour. */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  @Column({ type: 'varchar', length: 26, name: 'webhook_id' })
  webhookId: string;

  @Column({ type: 'varchar', length: 40, name: 'customer_id' })
  customerId: string;

  @Column({ type: 'varchar', length: 16 })
  state: OperationsNotificationState;

  /** The start of this notification's hour: not sent before it, and the next one not before an hour later. */
  @TimestampColumn({ name: 'slot_at' })
  slotAt: Date;

  /** When it is next due; while `sending`, the lease expiry; null once sent or failed. */
  @TimestampColumn({ name: 'next_attempt_at', nullable: true })
  nextAttemptAt: Date | null;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ type: 'varchar', length: 64, name: 'lease_owner', nullable: true })
  leaseOwner: string | null;

  /** The latest disable it reports (WebhookDisabledEvent, JSON). */
  @Column({ type: 'text' })
  event: string;

  /** Disables it stands for: the latest, and those folded into it. */
  @Column({ type: 'integer', default: 1 })
  disables: number;

  /** Of those, how many were `gone` (410) and how many `failing`. */
  @Column({ type: 'integer', name: 'gone_count', default: 0 })
  goneCount: number;

  @Column({ type: 'integer', name: 'failing_count', default: 0 })
  failingCount: number;

  /** The first of the disables it stands for. */
  @TimestampColumn({ name: 'first_disabled_at' })
  firstDisabledAt: Date;

  @Column({ type: 'varchar', length: 300, name: 'last_error', nullable: true })
  lastError: string | null;

  @TimestampColumn({ name: 'created_at' })
  createdAt: Date;

  @TimestampColumn({ name: 'updated_at' })
  updatedAt: Date;

  @TimestampColumn({ name: 'sent_at', nullable: true })
  sentAt: Date | null;
}
