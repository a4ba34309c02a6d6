import type { PageRequest } from '../pagination/page';
import type { DisabledReason, WebhookEntity } from '../delivery/webhook.entity';

export type WebhookSecrets = Pick<WebhookEntity, 'secret' | 'previousSecret'>;

/** What a list page holds of a webhook: everything its resource shows, never the secrets nor the failure clock. */
export type WebhookListItem = Omit<WebhookEntity, 'customerId' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt' | 'failingSince' | 'failurePeriods' | 'lastFailurePeriod'>;

/** A PATCH of a webhook, as stored: only the fields given change. */
export interface WebhookPatch {
  url?: string;
  allowNonstandardPort?: boolean;
  /** Disabled (manual) with its time, or resumed (null): resuming also restarts the failure clock. */
  disabled?: { at: Date; reason: DisabledReason } | null;
}

/** One subscription of a customer (an event kind and a subreddit) and when its first webhook was created. */
export interface CustomerSubscription {
  event: string;
  subreddit: string;
  since: Date;
}

/**
 * The webhooks store. Every tenant-facing query takes the customer id: there is no way to reach
 * another tenant's webhook from here. The injection token; the implementation for the database's
 * dialect is chosen in WebhooksModule.
 */
export abstract class WebhookStore {
  abstract countForCustomer(customerId: string): Promise<number>;

  /**
   * The customer's distinct subscriptions (event kind + subreddit), each with the creation time of
   * its oldest webhook: what the events history may show the customer. At most the webhook quota
   * of rows (idx_webhooks_customer_id).
   */
  abstract subscriptionsOf(customerId: string): Promise<CustomerSubscription[]>;

  /** Every customer's webhooks, counted (operator-only, not tenant-facing: the demo's check for a database in use). */
  abstract countAll(): Promise<number>;

  abstract findForCustomer(customerId: string, id: string): Promise<WebhookEntity | null>;

  abstract updateSecrets(customerId: string, w: Pick<WebhookEntity, 'id' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>): Promise<void>;

  /** Every customer's webhooks after `afterId`, by id, secrets only: the re-encrypt command's walk (operator-only, not tenant-facing). */
  abstract secretsPage(afterId: string, limit: number): Promise<(WebhookSecrets & Pick<WebhookEntity, 'id'>)[]>;

  /**
   * Swaps a webhook's stored secrets only if they are still `before`: a rotation or delete that
   * happened meanwhile wins, and the re-encrypt command simply finds that row current next time.
   */
  abstract replaceSecrets(id: string, before: WebhookSecrets, after: WebhookSecrets): Promise<boolean>;

  /**
   * Applies a PATCH to the customer's webhook; the row as it is afterwards, or null when it is not the
   * customer's. Disabling keeps an earlier disable's time and reason (a paused webhook that was
   * already auto-disabled stays `gone`/`failing`).
   */
  abstract updateForCustomer(customerId: string, id: string, patch: WebhookPatch): Promise<WebhookEntity | null>;

  /** Deletes the customer's webhook if it exists; another customer's row is never touched. */
  abstract deleteForCustomer(customerId: string, id: string): Promise<boolean>;

  /** Inserts unless the customer already has `max` webhooks, atomically. False when the quota was full. */
  abstract insertWithinQuota(row: WebhookEntity, max: number): Promise<boolean>;

  /**
   * Keyset page over (id) DESC: ids are time-ordered ULIDs, so this is newest first. `limit + 1` rows.
   * The list's hot path: plain rows, without the secrets.
   */
  abstract page(customerId: string, req: PageRequest): Promise<WebhookListItem[]>;
}
