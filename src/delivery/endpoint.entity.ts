import { Entity, PrimaryColumn, Column } from 'typeorm';
import { TimestampColumn } from '../database/columns';
import type { SecretPlace } from '../crypto/key-ring';

export type WebhookLastStatus = 'delivered' | 'retrying' | 'failed';

/** Why a webhook gets no deliveries: its owner paused it, its receiver answered 410 Gone, or it kept failing (see lifecycle/disable-rule.ts). */
export const DISABLED_REASONS = ['manual', 'gone', 'failing'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/**
 * An endpoint: where the delivery core sends (URL, signing secrets), its state (disabled, the
 * failure clock) and its latest outcome (`last_*`). The table keeps its first name, `webhooks`:
 * a webhook created through the API is this row plus its subscription (webhooks/
 * subscription.entity.ts, same id); a host's endpoint (DeliveryEndpoints.register) is this row
 * alone. The table is delivery's: others ask EndpointStore or DeliveryEndpoints.
 */
// Read by id only (the claim, the webhook API's pages through their subscriptions): no index beside the key.
@Entity('webhooks')
export class EndpointEntity {
  @PrimaryColumn({ type: 'varchar', length: 26 })
  id: string;

  @Column({ type: 'varchar', length: 40, name: 'customer_id' })
  customerId: string;

  @Column({ type: 'varchar', length: 2048 })
  url: string;

  @Column({ type: 'boolean', name: 'allow_nonstandard_port', default: false })
  allowNonstandardPort: boolean;

  /**
   * Signing secret (`whsec_…`), stored encrypted (`enc:v2:…`, SecretBox, bound to `webhook:<id>` and the column);
   * rows from before encryption hold it in clear until `trendhooks encryption reencrypt`.
   * Never returned after create/rotate.
   */
  @Column({ type: 'varchar', length: 255 })
  secret: string;

  /** The secret before the last rotation; it keeps signing until previousSecretExpiresAt. */
  @Column({ type: 'varchar', length: 255, name: 'previous_secret', nullable: true })
  previousSecret: string | null;

  @TimestampColumn({ name: 'previous_secret_expires_at', nullable: true })
  previousSecretExpiresAt: Date | null;

  @TimestampColumn({ name: 'created_at' })
  createdAt: Date;

  @TimestampColumn({ name: 'last_delivery_at', nullable: true })
  lastDeliveryAt: Date | null;

  @Column({ type: 'varchar', length: 16, name: 'last_status', nullable: true })
  lastStatus: WebhookLastStatus | null;

  @Column({ type: 'integer', name: 'last_response_code', nullable: true })
  lastResponseCode: number | null;

  /** Set while the webhook is disabled (paused or auto-disabled): fan-out skips it; its pending deliveries are held (paused by hand) or cancelled. */
  @TimestampColumn({ name: 'disabled_at', nullable: true })
  disabledAt: Date | null;

  @Column({ type: 'varchar', length: 16, name: 'disabled_reason', nullable: true })
  disabledReason: DisabledReason | null;

  /**
   * The failure clock of the auto-disable rule (lifecycle/disable-rule.ts): the start of the first
   * counted failed attempt since the last delivered one (or the last resume); null while the last
   * counted attempt was delivered.
   */
  @TimestampColumn({ name: 'failing_since', nullable: true })
  failingSince: Date | null;

  /** Distinct periods (a fifth of WEBHOOK_DISABLE_AFTER each, counted from failingSince) in which attempts failed. */
  @Column({ type: 'integer', name: 'failure_periods', default: 0 })
  failurePeriods: number;

  /** The newest of those periods (its index from failingSince); null when none was counted yet. */
  @Column({ type: 'integer', name: 'last_failure_period', nullable: true })
  lastFailurePeriod: number | null;
}

/** The webhook secret columns, as named in the table. */
export type WebhookSecretColumn = 'secret' | 'previous_secret';

/**
 * Where a webhook's secret is stored, bound into its ciphertext: a value copied onto another
 * webhook, or from one column to the other, does not decrypt.
 */
export function webhookSecretPlace(webhookId: string, column: WebhookSecretColumn): SecretPlace {
  return { row: `webhook:${webhookId}`, column };
}

/** The fields a new endpoint row is made of; the rest start empty (no previous secret, no delivery yet). */
export type NewEndpointRow = Pick<EndpointEntity, 'id' | 'customerId' | 'url' | 'allowNonstandardPort' | 'secret' | 'createdAt'>;

/** An endpoint row as created, for the webhook API (POST /v1/webhooks) or a host's DeliveryEndpoints.register. */
export function newEndpointRow(fields: NewEndpointRow): EndpointEntity {
  return {
    ...fields,
    previousSecret: null,
    previousSecretExpiresAt: null,
    lastDeliveryAt: null,
    lastStatus: null,
    lastResponseCode: null,
    disabledAt: null,
    disabledReason: null,
    failingSince: null,
    failurePeriods: 0,
    lastFailurePeriod: null,
  };
}
