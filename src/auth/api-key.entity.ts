import { Entity, PrimaryColumn, Column, Index } from 'typeorm';
import { TimestampColumn } from '../database/columns';

@Entity('api_keys')
export class ApiKeyEntity {
  /** `key_` + ULID. */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  @Index('idx_api_keys_customer')
  @Column({ type: 'varchar', length: 40, name: 'customer_id' })
  customerId: string;

  /** The first characters of the key, shown to operators so they can name a key without its secret. */
  @Column({ type: 'varchar', length: 20 })
  prefix: string;

  /** SHA-256 (hex) of the whole key; the key itself is never stored. */
  @Index('uq_api_keys_hash', { unique: true })
  @Column({ type: 'varchar', length: 64, name: 'key_hash' })
  keyHash: string;

  @TimestampColumn({ name: 'created_at' })
  createdAt: Date;

  @TimestampColumn({ name: 'revoked_at', nullable: true })
  revokedAt: Date | null;
}
