import { InjectTrendhooksDataSource } from '../database/data-source.token';
import { DataSource, IsNull, MoreThan } from 'typeorm';
import type { PageRequest } from '../pagination/page';
import { WebhookEntity } from './webhook.entity';
import { WebhookListItem, WebhookSecrets, WebhookStore } from './webhook.store';

/** The columns of a list page (no secrets), in the order WebhookListItem maps them. */
export const LIST_COLUMNS = 'id, url, event, subreddit, allow_nonstandard_port, created_at, last_delivery_at, last_status, last_response_code';

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
}

export function toListItem(r: WebhookListRow): WebhookListItem {
  return {
    id: r.id,
    url: r.url,
    event: r.event,
    subreddit: r.subreddit,
    allowNonstandardPort: r.allow_nonstandard_port === true || r.allow_nonstandard_port === 1,
    createdAt: new Date(Number(r.created_at)),
    lastDeliveryAt: r.last_delivery_at === null ? null : new Date(Number(r.last_delivery_at)),
    lastStatus: r.last_status,
    lastResponseCode: r.last_response_code,
  };
}

/** The WebhookStore queries both dialects run alike, written once with TypeORM; only the quota-checked insert differs. */
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

  async deleteForCustomer(customerId: string, id: string): Promise<boolean> {
    const res = await this.repo.delete({ customerId, id });
    return (res.affected ?? 0) > 0;
  }

  private pageSql?: { first: string; after: string; before: string };

  /**
   * One fixed statement per direction, run raw and mapped by hand: the query builder and entity
   * hydration were most of this route's database cost (bench/api).
   */
  async page(customerId: string, req: PageRequest): Promise<WebhookListItem[]> {
    if (!this.pageSql) {
      const p = this.ds.options.type === 'postgres' ? (n: number) => `$${n}` : () => '?';
      const base = `SELECT ${LIST_COLUMNS} FROM webhooks WHERE customer_id = ${p(1)}`;
      this.pageSql = {
        first: `${base} ORDER BY id DESC LIMIT ${p(2)}`,
        after: `${base} AND id < ${p(2)} ORDER BY id DESC LIMIT ${p(3)}`,
        before: `${base} AND id > ${p(2)} ORDER BY id ASC LIMIT ${p(3)}`,
      };
    }
    const sql = this.pageSql;
    const rows: WebhookListRow[] = req.before
      ? await this.ds.query(sql.before, [customerId, String(req.before[0]), req.limit + 1])
      : req.after
        ? await this.ds.query(sql.after, [customerId, String(req.after[0]), req.limit + 1])
        : await this.ds.query(sql.first, [customerId, req.limit + 1]);
    return rows.map(toListItem);
  }
}
