import { Entity, PrimaryColumn, Column } from 'typeorm';
import { TimestampColumn } from '../database/columns';
import type { Plan } from './plans';

@Entity('customers')
export class CustomerEntity {
  /** `cus_` + ULID. */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  @Column({ type: 'varchar', length: 200, unique: true })
  name: string;

  @Column({ type: 'varchar', length: 20 })
  plan: Plan;

  /**
   * Private destinations the operator opened to this customer alone (`trendhooks customers
   * allow-private`): space-separated `CIDR:PORTS` grants (see parsePrivateGrant). Null: none.
   */
  @Column({ type: 'text', name: 'private_allow', nullable: true })
  privateAllow: string | null;

  @TimestampColumn({ name: 'created_at' })
  createdAt: Date;
}

/**
 * Whether an operator's argument names a customer by id (`cus_…`, any case) rather than by name.
 * Names of this form are refused, so an id and a name can never be confused.
 */
export function looksLikeCustomerId(value: string): boolean {
  return /^cus_/i.test(value.trim());
}
