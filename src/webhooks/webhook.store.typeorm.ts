import { InjectTrendhooksDataSource } from '../database/data-source.token';
import { DataSource } from 'typeorm';
import type { PageRequest } from '../pagination/page';
import type { EndpointEntity } from '../delivery/endpoint.entity';
import { EndpointStore } from '../delivery/endpoint.store';
import type { RoutedEvent, SubscribedEndpoint } from '../delivery/subscription-source';
import { WebhookSubscriptionEntity } from './subscription.entity';
import { CustomerSubscription, Webhook, WebhookListItem, WebhookPatch, WebhookStore, WebhookSubscription } from './webhook.store';

/** Subscribers read per statement by the fan-out's lookup. */
const SUBSCRIBERS_PAGE = 2000;

/** The fan-out's page of subscribers, `p(n)` being the dialect's placeholder of the n-th parameter: event, subreddit, after, limit. */
export const subscriberPageSql = (p: (n: number) => string): string =>
  `SELECT webhook_id, customer_id FROM webhook_subscriptions WHERE event = ${p(1)} AND subreddit = ${p(2)} AND webhook_id > ${p(3)} ORDER BY webhook_id LIMIT ${p(4)}`;

/** A list page's subscription row, as an array (both stores read pages in their driver's raw row mode): webhook id, event, subreddit. */
export type SubscriptionPageRow = [string, WebhookSubscription['event'], string];

/** The three statements of a list page of subscriptions (first, after a cursor, before one), in one dialect. */
export interface ListPageSql {
  first: string;
  after: string;
  before: string;
}

/** A list page's statements, `p(n)` being the dialect's placeholder of the n-th parameter (1-based). */
export function listPageSql(p: (n: number) => string): ListPageSql {
  const base = `SELECT webhook_id, event, subreddit FROM webhook_subscriptions WHERE customer_id = ${p(1)}`;
  return {
    first: `${base} ORDER BY webhook_id DESC LIMIT ${p(2)}`,
    after: `${base} AND webhook_id < ${p(2)} ORDER BY webhook_id DESC LIMIT ${p(3)}`,
    before: `${base} AND webhook_id > ${p(2)} ORDER BY webhook_id ASC LIMIT ${p(3)}`,
  };
}

/** Which of `sql` a page request runs, and its parameters (`limit + 1` rows: one more tells whether a next page exists). */
export function listPageQuery(sql: ListPageSql, customerId: string, req: PageRequest): [string, unknown[]] {
  if (req.before) return [sql.before, [customerId, String(req.before[0]), req.limit + 1]];
  if (req.after) return [sql.after, [customerId, String(req.after[0]), req.limit + 1]];
  return [sql.first, [customerId, req.limit + 1]];
}

/**
 * The WebhookStore queries both dialects run alike, written once with TypeORM; the quota-checked
 * insert and the subscriptions' list page (on the driver, raw) differ.
 */
export abstract class TypeOrmWebhookStore extends WebhookStore {
  constructor(
    @InjectTrendhooksDataSource() protected readonly ds: DataSource,
    protected readonly endpoints: EndpointStore,
  ) {
    super();
  }

  private get repo() {
    return this.ds.getRepository(WebhookSubscriptionEntity);
  }

  /** The page of subscription rows (raw, per dialect). */
  protected abstract subscriptionPage(customerId: string, req: PageRequest): Promise<SubscriptionPageRow[]>;

  /** Webhook id and owner of the subscribers of a kind and subreddit after `after`, by id, at most `limit` (raw, per dialect). */
  protected abstract subscriberPage(event: string, subreddit: string, after: string, limit: number): Promise<[string, string][]>;

  /** The quota-checked insert of the subscription row (per dialect): false when the customer has `max` already. */
  protected abstract insertSubscriptionWithinQuota(row: WebhookSubscriptionEntity, max: number): Promise<boolean>;

  async page(customerId: string, req: PageRequest): Promise<WebhookListItem[]> {
    const subs = await this.subscriptionPage(customerId, req);
    const endpoints = await this.endpoints.viewsForCustomer(
      customerId,
      subs.map((s) => s[0]),
    );
    // A subscription always has its endpoint (created before it, deleted after it).
    return subs.flatMap(([id, event, subreddit]) => {
      const e = endpoints.get(id);
      return e ? [{ ...e, event, subreddit }] : [];
    });
  }

  async insertWithinQuota(endpoint: EndpointEntity, subscription: WebhookSubscription, max: number): Promise<boolean> {
    // The endpoint first: whoever finds the subscription (the fan-out, a list page) finds its endpoint too.
    await this.endpoints.insert(endpoint);
    const row: WebhookSubscriptionEntity = { webhookId: endpoint.id, customerId: endpoint.customerId, event: subscription.event, subreddit: subscription.subreddit, createdAt: endpoint.createdAt };
    let inserted = false;
    try {
      inserted = await this.insertSubscriptionWithinQuota(row, max);
    } finally {
      if (!inserted) await this.endpoints.remove(endpoint.id, endpoint.customerId);
    }
    return inserted;
  }

  countForCustomer(customerId: string): Promise<number> {
    return this.repo.countBy({ customerId });
  }

  async subscriptionsOf(customerId: string): Promise<CustomerSubscription[]> {
    const rows: { event: string; subreddit: string; since: string | number }[] = await this.repo
      .createQueryBuilder('s')
      .select('s.event', 'event')
      .addSelect('s.subreddit', 'subreddit')
      .addSelect('MIN(s.created_at)', 'since')
      .where('s.customer_id = :customerId', { customerId })
      .groupBy('s.event')
      .addGroupBy('s.subreddit')
      .getRawMany();
    return rows.map((r) => ({ event: r.event, subreddit: r.subreddit, since: new Date(Number(r.since)) }));
  }

  countAll(): Promise<number> {
    return this.repo.count();
  }

  async findForCustomer(customerId: string, id: string): Promise<Webhook | null> {
    const sub = await this.repo.findOneBy({ customerId, webhookId: id });
    if (!sub) return null;
    const endpoint = await this.endpoints.findForCustomer(customerId, id);
    return endpoint ? { ...endpoint, event: sub.event, subreddit: sub.subreddit } : null;
  }

  async updateForCustomer(customerId: string, id: string, patch: WebhookPatch): Promise<Webhook | null> {
    const sub = await this.repo.findOneBy({ customerId, webhookId: id });
    if (!sub) return null;
    const endpoint = await this.endpoints.update(customerId, id, patch);
    return endpoint ? { ...endpoint, event: sub.event, subreddit: sub.subreddit } : null;
  }

  async deleteForCustomer(customerId: string, id: string): Promise<boolean> {
    // The subscription first: no fan-out finds the webhook once this returns. A delivery claimed
    // meanwhile is cancelled by its worker (no webhook); the service cancels the rest.
    const res = await this.repo.delete({ customerId, webhookId: id });
    if ((res.affected ?? 0) === 0) return false;
    await this.endpoints.remove(id, customerId);
    return true;
  }

  /**
   * Read in pages by id (the (event, subreddit) index), yielding to the event loop between them:
   * on SQLite a statement runs on the one thread, and 50,000 subscribers read at once held it for
   * a third of a second (test/fanout-scale.e2e-spec.ts).
   */
  async subscribers(event: RoutedEvent): Promise<SubscribedEndpoint[]> {
    const out: SubscribedEndpoint[] = [];
    for (let after = ''; ; ) {
      const rows = await this.subscriberPage(event.type, event.subreddit, after, SUBSCRIBERS_PAGE);
      for (const [id, customerId] of rows) out.push({ id, customerId });
      if (rows.length < SUBSCRIBERS_PAGE) return out;
      after = rows[rows.length - 1][0];
      await new Promise<void>((r) => setImmediate(r));
    }
  }

  async subredditsWithWebhooks(): Promise<string[]> {
    const rows = await this.repo.createQueryBuilder('s').select('DISTINCT s.subreddit', 'subreddit').getRawMany<{ subreddit: string }>();
    return rows.map((r) => r.subreddit);
  }

  async hasWebhook(subreddit: string, customerId?: string): Promise<boolean> {
    const where = customerId === undefined ? { subreddit } : { subreddit, customerId };
    return (await this.repo.findOne({ select: { webhookId: true }, where })) !== null;
  }
}
