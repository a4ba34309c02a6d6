import { Injectable } from '@nestjs/common';
import { InjectTrendhooksDataSource } from '../database/data-source.token';
import { DataSource, IsNull } from 'typeorm';
import type { EventKind } from '../events/catalogue';
import type { Subscriber } from './queue/types';
import { WebhookEntity } from './webhook.entity';

/** An event as it is routed: what a subscription source may filter on. */
export interface RoutedEvent {
  /** `evt_…`; a replayed id writes nothing (its deliveries were made the first time). */
  id: string;
  type: EventKind;
  /** Normalised: lower case, no `r/`. */
  subreddit: string;
  data: Readonly<Record<string, unknown>>;
  createdAt: Date;
}

/**
 * One destination that gets a delivery: the id of an endpoint stored by the delivery core (see
 * `DeliveryEndpoints.register`) and its owner (the customer whose DNS budget the attempt uses).
 */
export type SubscribedEndpoint = Subscriber;

/**
 * Who receives an event. The delivery core asks this when an event is emitted and writes one
 * delivery per answered endpoint, in the same transaction as the event (the outbox); endpoints
 * that no longer exist when a delivery is claimed are cancelled without an attempt.
 *
 * The built-in source, `WebhookTableSubscriptions`, matches the `event` and `subreddit` of the
 * rows that `POST /v1/webhooks` creates; its lookup runs inside the emit statement itself (one
 * SQL statement on PostgreSQL). A host with its own notion of subscriptions implements this class
 * and hands an instance to `DeliveryModule.forRoot({ subscriptions })` (or returns it from
 * `forRootAsync`'s factory, to build it from the host's own providers). It must answer from its
 * own data only, quickly (it runs before the event's transaction), and may throw an `AppError`
 * to refuse the event.
 */
export abstract class SubscriptionSource {
  abstract subscribers(event: RoutedEvent): Promise<readonly SubscribedEndpoint[]>;
}

/**
 * What the built-in subscriptions name, for modules that follow them without reading the
 * `webhooks` table themselves (the table is the delivery core's): the Reddit poller tracks these
 * subreddits, and coverage answers whether one is tracked.
 */
export abstract class WebhookSubscriptions {
  /** Every subreddit a webhook subscribes to, each once (a host's endpoints subscribe to none). */
  abstract subredditsWithWebhooks(): Promise<string[]>;

  /** Whether any webhook subscribes to `subreddit` (as stored: lower case). */
  abstract hasWebhook(subreddit: string): Promise<boolean>;
}

/** The built-in source: the webhooks created through the API, by event kind and subreddit. */
@Injectable()
export class WebhookTableSubscriptions extends SubscriptionSource implements WebhookSubscriptions {
  constructor(@InjectTrendhooksDataSource() private readonly ds: DataSource) {
    super();
  }

  /**
   * The same rows the fused emit path finds, disabled webhooks left out (EventsService does not
   * call this for the built-in source: the queue's insert statement joins the table itself).
   */
  async subscribers(event: RoutedEvent): Promise<SubscribedEndpoint[]> {
    const rows = await this.ds.getRepository(WebhookEntity).find({ select: { id: true, customerId: true }, where: { event: event.type, subreddit: event.subreddit, disabledAt: IsNull() } });
    return rows.map((r) => ({ id: r.id, customerId: r.customerId }));
  }

  async subredditsWithWebhooks(): Promise<string[]> {
    const rows = await this.ds.getRepository(WebhookEntity).createQueryBuilder('w').select('DISTINCT w.subreddit', 'subreddit').where("w.subreddit <> ''").getRawMany<{ subreddit: string }>();
    return rows.map((r) => r.subreddit);
  }

  async hasWebhook(subreddit: string): Promise<boolean> {
    // A host endpoint's empty subreddit is no subscription.
    if (subreddit === '') return false;
    return (await this.ds.getRepository(WebhookEntity).findOne({ select: { id: true }, where: { subreddit } })) !== null;
  }
}
