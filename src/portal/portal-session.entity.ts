import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../database/columns';

/**
 * One portal link and the browser session it was exchanged for. Neither secret is stored: the
 * link's token and the session's cookie are 256 random bits each, kept here as SHA-256 hashes.
 * A link is used once (`exchanged_at` set by the one UPDATE that wins), within `link_expires_at`;
 * the session then lives until `session_expires_at`.
 */
@Entity('portal_sessions')
export class PortalSessionEntity {
  /** `pses_` + ULID. */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  /** SHA-256 (hex) of the link's token. */
  @Index('uq_portal_sessions_token', { unique: true })
  @Column({ type: 'varchar', length: 64, name: 'token_hash' })
  tokenHash: string;

  /** The tenant the session acts for (TrendhooksPrincipal.tenantId). Indexed: a revocation ends a customer's rows. */
  @Index('idx_portal_sessions_customer')
  @Column({ type: 'varchar', length: 40, name: 'customer_id' })
  customerId: string;

  /** The plan of the principal that minted the link, in force for the session. */
  @Column({ type: 'varchar', length: 20 })
  plan: string;

  /**
   * The rate-limit counter the session's requests are charged to: the minting principal's (an API
   * key's `key:<id>`), so a portal session spends the budget of the key that opened it, never a
   * budget of its own. Null: the tenant's default (`tenant:<customer_id>`).
   */
  @Column({ type: 'text', name: 'rate_limit_key', nullable: true })
  rateLimitKey: string | null;

  /** Set: the session reaches this one webhook only. */
  @Column({ type: 'varchar', length: 26, name: 'webhook_id', nullable: true })
  webhookId: string | null;

  @TimestampColumn({ name: 'created_at' })
  createdAt: Date;

  @TimestampColumn({ name: 'link_expires_at' })
  linkExpiresAt: Date;

  @TimestampColumn({ name: 'exchanged_at', nullable: true })
  exchangedAt: Date | null;

  /** SHA-256 (hex) of the session cookie's value; null until the link is exchanged. */
  @Index('uq_portal_sessions_session', { unique: true })
  @Column({ type: 'varchar', length: 64, name: 'session_hash', nullable: true })
  sessionHash: string | null;

  @TimestampColumn({ name: 'session_expires_at', nullable: true })
  sessionExpiresAt: Date | null;
}
