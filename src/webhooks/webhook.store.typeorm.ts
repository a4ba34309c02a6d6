import { InjectTrendhooksDataSource } from '../database/data-source.token';
import { DataSource, IsNull, MoreThan, Not } from 'typeorm';
import type { PageRequest } from '../pagination/page';
import { WebhookEntity } from '../delivery/webhook.entity';
import { CustomerSubscription, WebhookListItem, WebhookPatch, WebhookSecrets, WebhookStore } from './webhook.store';

/** The columns of a list page (no secrets), in the order listItemFromRaw reads them. */
export const LIST_COLUMNS = 'id, url, event, subreddit, allow_nonstandard_port, created_at, last_delivery_at, last_status, last_response_code, disabled_at, disabled_reason';

export interface WebhookListRow {
  id: string;
  url: string;
  event: WebhookListItem['event'];
  subreddit: string;
  // SQLite answers 0/1 and numbers; pg answers a boolean and BIGINT as a string.
  allow_nonstandard_port: boolean | number;
  created_at: string | number;
  last_delivery_at: string | number | null;
  last_status: WebhookListItem['lastStatus'];
  last_response_code: number | null;
  disabled_at: string | number | null;
  disabled_reason: WebhookListItem['disabledReason'];
}

/** LIST_COLUMNS one by one, in order: where listItemFromRaw reads each. */
const LIST_COLUMN_NAMES: readonly (keyof WebhookListRow)[] = ['id', 'url', 'event', 'subreddit', 'allow_nonstandard_port', 'created_at', 'last_delivery_at', 'last_status', 'last_response_code', 'disabled_at', 'disabled_reason'];
if (LIST_COLUMNS !== LIST_COLUMN_NAMES.join(', ')) throw new Error(`webhooks list columns changed: ${LIST_COLUMNS}`);

/**
 * A list page row, LIST_COLUMNS as an array (both stores read pages in their driver's raw row
 * mode), as a list item: no keyed row object per row in between.
 */
export function listItemFromRaw(v: unknown[]): WebhookListItem {
  return {
    id: v[0] as string,
    url: v[1] as string,
    event: v[2] as WebhookListItem['event'],
    subreddit: v[3] as string,
    allowNonstandardPort: v[4] === true || v[4] === 1,
    createdAt: new Date(Number(v[5])),
    lastDeliveryAt: v[6] === null ? null : new Date(Number(v[6])),
    lastStatus: v[7] as WebhookListItem['lastStatus'],
    lastResponseCode: v[8] as number | null,
    disabledAt: v[9] === null ? null : new Date(Number(v[9])),
    disabledReason: v[10] as WebhookListItem['disabledReason'],
  };
}

/** The three statements of a list page (first, after a cursor, before one), in one dialect. */
export interface ListPageSql {
  first: string;
  after: string;
  before: string;
}

/** A list page's statements, `p(n)` being the dialect's placeholder of the n-th parameter (1-based). */
export function listPageSql(p: (n: number) => string): ListPageSql {
  const base = `SELECT ${LIST_COLUMNS} FROM webhooks WHERE customer_id = ${p(1)}`;
  return {
    first: `${base} ORDER BY id DESC LIMIT ${p(2)}`,
    after: `${base} AND id < ${p(2)} ORDER BY id DESC LIMIT ${p(3)}`,
    before: `${base} AND id > ${p(2)} ORDER BY id ASC LIMIT ${p(3)}`,
  };
}

/** Which of `sql` a page request runs, and its parameters (`limit + 1` rows: one more tells whether a next page exists). */
export function listPageQuery(sql: ListPageSql, customerId: string, req: PageRequest): [string, unknown[]] {
  if (req.before) return [sql.before, [customerId, String(req.before[0]), req.limit + 1]];
  if (req.after) return [sql.after, [customerId, String(req.after[0]), req.limit + 1]];
  return [sql.first, [customerId, req.limit + 1]];
}

/** The WebhookStore queries both dialects run alike, written once with TypeORM; the quota-checked insert and the list page (on the driver, raw) differ. */
export abstract class TypeOrmWebhookStore extends WebhookStore {
  constructor(@InjectTrendhooksDataSource() protected readonly ds: DataSource) {
    super();
  }

  /** The columns a dialect's quota-checked insert names, and the row's values in that order. */
  protected quotaInsert(row: WebhookEntity): { cols: string[]; values: unknown[] } {
    return {
      cols: ['id', 'customer_id', 'url', 'event', 'subreddit', 'allow_nonstandard_port', 'secret', 'created_at'],
      values: [row.id, row.customerId, row.url, row.event, row.subreddit, row.allowNonstandardPort, row.secret, row.createdAt.getTime()],
    };
  }

  private get repo() {
    return this.ds.getRepository(WebhookEntity);
  }

  countForCustomer(customerId: string): Promise<number> {
    return this.repo.countBy({ customerId });
  }

  async subscriptionsOf(customerId: string): Promise<CustomerSubscription[]> {
    const rows: { event: string; subreddit: string; since: string | number }[] = await this.repo
      .createQueryBuilder('w')
      .select('w.event', 'event')
      .addSelect('w.subreddit', 'subreddit')
      .addSelect('MIN(w.created_at)', 'since')
      .where('w.customer_id = :customerId', { customerId })
      .groupBy('w.event')
      .addGroupBy('w.subreddit')
      .getRawMany();
    return rows.map((r) => ({ event: r.event, subreddit: r.subreddit, since: new Date(Number(r.since)) }));
  }

  countAll(): Promise<number> {
    return this.repo.count();
  }

  findForCustomer(customerId: string, id: string): Promise<WebhookEntity | null> {
    return this.repo.findOneBy({ customerId, id });
  }

  async updateSecrets(customerId: string, w: Pick<WebhookEntity, 'id' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>): Promise<void> {
    await this.repo.update({ customerId, id: w.id }, { secret: w.secret, previousSecret: w.previousSecret, previousSecretExpiresAt: w.previousSecretExpiresAt });
  }

  secretsPage(afterId: string, limit: number): Promise<(WebhookSecrets & Pick<WebhookEntity, 'id'>)[]> {
    return this.repo.find({ select: { id: true, secret: true, previousSecret: true }, where: { id: MoreThan(afterId) }, order: { id: 'ASC' }, take: limit });
  }

  async replaceSecrets(id: string, before: WebhookSecrets, after: WebhookSecrets): Promise<boolean> {
    const res = await this.repo.update(
      { id, secret: before.secret, previousSecret: before.previousSecret === null ? IsNull() : before.previousSecret },
      { secret: after.secret, previousSecret: after.previousSecret },
    );
    return (res.affected ?? 0) > 0;
  }

  async updateForCustomer(customerId: string, id: string, patch: WebhookPatch): Promise<WebhookEntity | null> {
    // Statements that each hold on their own, no transaction: on SQLite an async TypeORM
    // transaction would take in the statements other requests run on the shared connection meanwhile.
    const set: Partial<WebhookEntity> = {};
    if (patch.url !== undefined) set.url = patch.url;
    if (patch.allowNonstandardPort !== undefined) set.allowNonstandardPort = patch.allowNonstandardPort;
    if (Object.keys(set).length > 0) await this.repo.update({ customerId, id }, set);
    if (patch.disabled === null) {
      // Resumed: the failure clock starts again, so an old outage cannot disable it at the first failure.
      await this.repo.update({ customerId, id, disabledAt: Not(IsNull()) }, { disabledAt: null, disabledReason: null, failingSince: null, failurePeriods: 0, lastFailurePeriod: null });
    } else if (patch.disabled) {
      // Disabled already (by its owner or by the worker): it keeps its first reason and time.
      await this.repo.update({ customerId, id, disabledAt: IsNull() }, { disabledAt: patch.disabled.at, disabledReason: patch.disabled.reason });
    }
    return this.repo.findOneBy({ customerId, id });
  }

  async deleteForCustomer(customerId: string, id: string): Promise<boolean> {
    const res = await this.repo.delete({ customerId, id });
    return (res.affected ?? 0) > 0;
  }
}
