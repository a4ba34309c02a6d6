import type { PageRequest } from '../pagination/page';
import type { EndpointEntity } from '../delivery/endpoint.entity';
import type { EndpointPatch, EndpointView } from '../delivery/endpoint.store';
import type { RoutedEvent, SubscribedEndpoint, SubscriptionTable } from '../delivery/subscription-source';
import type { WebhookSubscriptionEntity } from './subscription.entity';

/** What a webhook subscribes to. */
export type WebhookSubscription = Pick<WebhookSubscriptionEntity, 'event' | 'subreddit'>;

/** A webhook as the API shows it: its endpoint (the delivery core's row) and its subscription. */
export type Webhook = EndpointEntity & WebhookSubscription;

/** What a list page holds of a webhook: everything its resource shows, never the secrets nor the failure clock. */
export type WebhookListItem = EndpointView & WebhookSubscription;

/** A PATCH of a webhook, as stored: only the fields given change (all of them the endpoint's). */
export type WebhookPatch = EndpointPatch;

/** One subscription of a customer (an event kind and a subreddit) and when its first webhook was created. */
export interface CustomerSubscription {
  event: string;
  subreddit: string;
  since: Date;
}

/**
 * The webhooks store: owns `webhook_subscriptions` (what each webhook subscribes to) and asks the
 * delivery core's EndpointStore for each webhook's endpoint (URL, secrets, state, `last_*`). Every
 * tenant-facing query takes the customer id: there is no way to reach another tenant's webhook
 * from here. It is also the built-in SubscriptionSource (WebhooksModule attaches it to
 * DeliveryModule's BuiltInSubscriptions). The injection token; the implementation for the
 * database's dialect is chosen in WebhooksModule.
 */
export abstract class WebhookStore implements SubscriptionTable {
  abstract countForCustomer(customerId: string): Promise<number>;

  /**
   * The customer's distinct subscriptions (event kind + subreddit), each with the creation time of
   * its oldest webhook: what the events history may show the customer. At most the webhook quota
   * of rows.
   */
  abstract subscriptionsOf(customerId: string): Promise<CustomerSubscription[]>;

  /** Every customer's webhooks, counted (operator-only, not tenant-facing: the demo's check for a database in use). */
  abstract countAll(): Promise<number>;

  abstract findForCustomer(customerId: string, id: string): Promise<Webhook | null>;

  /**
   * Applies a PATCH to the customer's webhook (its endpoint); the webhook as it is afterwards, or
   * null when it is not the customer's. Disabling keeps an earlier disable's time and reason (a
   * paused webhook that was already auto-disabled stays `gone`/`failing`).
   */
  abstract updateForCustomer(customerId: string, id: string, patch: WebhookPatch): Promise<Webhook | null>;

  /** Deletes the customer's webhook (subscription, then endpoint) if it exists; another customer's is never touched. */
  abstract deleteForCustomer(customerId: string, id: string): Promise<boolean>;

  /**
   * Stores a new webhook unless the customer already has `max`, atomically as far as the quota
   * goes: the endpoint first, then the subscription (the quota-checked write); a full quota removes
   * the endpoint again. False when the quota was full.
   */
  abstract insertWithinQuota(endpoint: EndpointEntity, subscription: WebhookSubscription, max: number): Promise<boolean>;

  /**
   * Keyset page over (id) DESC: ids are time-ordered ULIDs, so this is newest first. `limit + 1` rows.
   * The list's hot path: plain rows, without the secrets.
   */
  abstract page(customerId: string, req: PageRequest): Promise<WebhookListItem[]>;

  /** The built-in source: every webhook on the event's kind and subreddit, oldest first (the delivery core skips disabled ones). */
  abstract subscribers(event: RoutedEvent): Promise<SubscribedEndpoint[]>;

  /** Every subreddit a webhook subscribes to, each once (the poller's tracked set). */
  abstract subredditsWithWebhooks(): Promise<string[]>;

  /** Whether a webhook subscribes to `subreddit` (as stored: lower case): one of `customerId`'s when given, else anyone's. */
  abstract hasWebhook(subreddit: string, customerId?: string): Promise<boolean>;
}
