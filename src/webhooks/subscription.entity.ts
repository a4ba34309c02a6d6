import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../database/columns';
import type { EventKind } from '../events/catalogue';

/**
 * What a webhook created through the API subscribes to: one event kind on one subreddit. The
 * webhook API's half of a webhook; the delivery core's half (URL, secrets, state, `last_*`) is its
 * endpoint, the `webhooks` row with the same id (delivery/endpoint.entity.ts). This table is the
 * webhooks module's alone: the fan-out asks it through SubscriptionSource, the poller through
 * WebhookSubscriptions, never by SQL.
 */
@Entity('webhook_subscriptions')
// Keyset pages of one customer's webhooks walk this index (the id is a time-ordered ULID), and the quota counts on it.
@Index('idx_webhook_subscriptions_customer', ['customerId', 'webhookId'])
// Fan-out of an event finds its subscribers through this one.
@Index('idx_webhook_subscriptions_event_subreddit', ['event', 'subreddit'])
export class WebhookSubscriptionEntity {
  /** The webhook's id: also its endpoint's. */
  @PrimaryColumn({ type: 'varchar', length: 26, name: 'webhook_id' })
  webhookId: string;

  @Column({ type: 'varchar', length: 40, name: 'customer_id' })
  customerId: string;

  @Column({ type: 'varchar', length: 32 })
  event: EventKind;

  /** Normalised: lower case, no `r/`. */
  @Column({ type: 'varchar', length: 21 })
  subreddit: string;

  @TimestampColumn({ name: 'created_at' })
  createdAt: Date;
}
