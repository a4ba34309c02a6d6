import { Entity, PrimaryColumn, Column, Index } from 'typeorm';
import { TimestampColumn } from '../database/columns';

/** One row per try (novu-style), so a customer can see exactly what happened and when. */
@Entity('delivery_attempts')
@Index('idx_attempts_delivery', ['deliveryId', 'attemptNo'])
export class AttemptEntity {
  @PrimaryColumn({ type: 'varchar', length: 26 })
  id: string;

  @Column({ type: 'varchar', length: 40, name: 'delivery_id' })
  deliveryId: string;

  @Column({ type: 'integer', name: 'attempt_no' })
  attemptNo: number;

  @TimestampColumn({ name: 'started_at' })
  startedAt: Date;

  @Column({ type: 'integer', name: 'duration_ms' })
  durationMs: number;

  @Column({ type: 'integer', name: 'status_code', nullable: true })
  statusCode: number | null;

  /** `delivered`, `transient` or `permanent`. */
  @Column({ type: 'varchar', length: 16 })
  outcome: string;

  /** e.g. `http_503`, `timeout`, `destination_blocked`; null when delivered. */
  @Column({ type: 'varchar', length: 40, name: 'error_class', nullable: true })
  errorClass: string | null;

  /** First 1 KiB of the response body (or of the error message). */
  @Column({ type: 'text', name: 'response_excerpt', nullable: true })
  responseExcerpt: string | null;
}
