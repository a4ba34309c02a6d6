import { InjectTrendhooksDataSource } from '../core/tokens';
import { DataSource, IsNull, MoreThan } from 'typeorm';
import type { PageRequest } from '../pagination/page';
import { WebhookEntity } from './webhook.entity';
import { WebhookSecrets, WebhookStore } from './webhook.store';

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

  page(customerId: string, req: PageRequest): Promise<WebhookEntity[]> {
    const qb = this.repo.createQueryBuilder('w').where('w.customer_id = :customerId', { customerId });
    if (req.before) {
      qb.andWhere('w.id > :before', { before: String(req.before[0]) }).orderBy('w.id', 'ASC');
    } else {
      if (req.after) qb.andWhere('w.id < :after', { after: String(req.after[0]) });
      qb.orderBy('w.id', 'DESC');
    }
    return qb.limit(req.limit + 1).getMany();
  }
}
