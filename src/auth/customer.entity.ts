import { Entity, PrimaryColumn, Column } from 'typeorm';
import { TimestampColumn } from '../database/columns';
import type { Plan } from '../config/config';

@Entity('customers')
export class CustomerEntity {
  /** `cus_` + ULID. */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  @Column({ type: 'varchar', length: 200, unique: true })
  name: string;

  @Column({ type: 'varchar', length: 20 })
  plan: Plan;

  @TimestampColumn({ name: 'created_at' })
  createdAt: Date;
}
