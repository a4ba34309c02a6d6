import { Injectable } from '@nestjs/common';
import type { EventKind } from '../events/catalogue';
import type { Subscriber } from './queue/types';

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
 * delivery per answered endpoint, in the same transaction as the event (the outbox); an answered
 * endpoint that is disabled or gone gets none, and endpoints that no longer exist when a delivery
 * is claimed are cancelled without an attempt.
 *
 * The built-in source is the webhook API's subscriptions (WebhooksModule's `webhook_subscriptions`,
 * reached through BuiltInSubscriptions). A host with its own notion of subscriptions implements
 * this class and hands an instance to `DeliveryModule.forRoot({ subscriptions })` (or returns it
 * from `forRootAsync`'s factory, to build it from the host's own providers). It must answer from
 * its own data only, quickly (it runs before the event's transaction), and may throw an `AppError`
 * to refuse the event. Answer the endpoints in a stable order, oldest first: a replay of an event
 * whose fan-out a crash cut short checks the last one to tell whether it finished.
 */
export abstract class SubscriptionSource {
  abstract subscribers(event: RoutedEvent): Promise<readonly SubscribedEndpoint[]>;
}

/**
 * What the built-in subscriptions name, for modules that follow them without reading the webhook
 * API's table: the Reddit poller tracks these subreddits, and coverage answers whether one is tracked.
 */
export abstract class WebhookSubscriptions {
  /** Every subreddit a webhook subscribes to, each once. */
  abstract subredditsWithWebhooks(): Promise<string[]>;

  /**
   * Whether a webhook subscribes to `subreddit` (as stored: lower case): one of `customerId`'s when
   * given (what a customer may be told), else anyone's (the poller's own question).
   */
  abstract hasWebhook(subreddit: string, customerId?: string): Promise<boolean>;
}

/** A store that answers both: WebhooksModule's subscriptions. */
export type SubscriptionTable = SubscriptionSource & WebhookSubscriptions;

/**
 * The built-in source and the subscribed subreddits, as DeliveryModule provides them: the webhook
 * API's subscriptions once WebhooksModule attaches its store (the delivery core never imports the
 * webhooks module, so the table comes to it), and none before or without it: a host with
 * DeliveryModule alone and no source of its own has no subscriptions, and its events reach no one.
 */
@Injectable()
export class BuiltInSubscriptions extends SubscriptionSource implements WebhookSubscriptions {
  private table?: SubscriptionTable;

  /** Called once, by WebhooksModule. */
  attach(table: SubscriptionTable): void {
    if (this.table !== undefined && this.table !== table) throw new Error('the built-in subscriptions are attached already');
    this.table = table;
  }

  async subscribers(event: RoutedEvent): Promise<readonly SubscribedEndpoint[]> {
    return this.table ? this.table.subscribers(event) : [];
  }

  async subredditsWithWebhooks(): Promise<string[]> {
    return this.table ? this.table.subredditsWithWebhooks() : [];
  }

  async hasWebhook(subreddit: string, customerId?: string): Promise<boolean> {
    return this.table ? this.table.hasWebhook(subreddit, customerId) : false;
  }
}
