import { Column, Entity, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../../database/columns';
import type { CircuitState } from './circuit-policy';

/**
 * One customer's circuit for one destination (host and port, `destinationOf`). A row exists only
 * while the destination has failed since it last answered: a closed circuit with nothing to
 * remember has none, so healthy destinations cost no row and no write.
 */
@Entity('destination_circuits')
export class DestinationCircuitEntity {
  @PrimaryColumn({ type: 'varchar', length: 40, name: 'customer_id' })
  customerId: string;

  /** The URL's host and port as written (a URL is at most 2048 characters). */
  @PrimaryColumn({ type: 'varchar', length: 2048 })
  destination: string;

  @Column({ type: 'varchar', length: 16 })
  state: CircuitState;

  @Column({ type: 'integer', name: 'consecutive_failures', default: 0 })
  consecutiveFailures: number;

  /** open: the end of the pause; half_open: the probe's deadline. */
  @TimestampColumn({ name: 'opened_until', nullable: true })
  openedUntil: Date | null;

  /** Openings since the destination last answered: each doubles the pause. */
  @Column({ type: 'integer', name: 'open_count', default: 0 })
  openCount: number;

  @TimestampColumn({ name: 'updated_at' })
  updatedAt: Date;
}
