import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull, MoreThan } from 'typeorm';
import { dialectOf } from '../database/data-source';
import type { PageRequest } from '../pagination/page';
import { WebhookEntity } from './webhook.entity';

/** Every query takes the customer id: there is no way to reach another tenant's webhook from here. */
@Injectable()
export class WebhookRepository {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

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

  /** Every customer's webhooks, by id, secrets only: the re-encrypt command's walk (operator-only, not tenant-facing). */
  secretsPage(afterId: string, limit: number): Promise<Pick<WebhookEntity, 'id' | 'secret' | 'previousSecret'>[]> {
    return this.repo.find({ select: { id: true, secret: true, previousSecret: true }, where: { id: MoreThan(afterId) }, order: { id: 'ASC' }, take: limit });
  }

  /**
   * Swaps a webhook's stored secrets only if they are still `before`: a rotation or delete that
   * happened meanwhile wins, and the re-encrypt command simply finds that row current next time.
   */
  async replaceSecrets(id: string, before: Pick<WebhookEntity, 'secret' | 'previousSecret'>, after: Pick<WebhookEntity, 'secret' | 'previousSecret'>): Promise<boolean> {
    const res = await this.repo.update(
      { id, secret: before.secret, previousSecret: before.previousSecret === null ? IsNull() : before.previousSecret },
      { secret: after.secret, previousSecret: after.previousSecret },
    );
    return (res.affected ?? 0) > 0;
  }

  /** Deletes the customer's webhook if it exists; another customer's row is never touched. */
  async deleteForCustomer(customerId: string, id: string): Promise<boolean> {
    const res = await this.repo.delete({ customerId, id });
    return (res.affected ?? 0) > 0;
  }

  /**
   * Inserts unless the customer already has `max` webhooks, atomically: PostgreSQL serialises
   * creates of one customer on its row lock; SQLite runs one writer at a time, and the check
   * and the insert are a single statement.
   */
  async insertWithinQuota(row: WebhookEntity, max: number): Promise<boolean> {
    const cols = ['id', 'customer_id', 'url', 'event', 'subreddit', 'allow_nonstandard_port', 'secret', 'created_at'];
    const values = [row.id, row.customerId, row.url, row.event, row.subreddit, row.allowNonstandardPort, row.secret, row.createdAt.getTime()];
    if (dialectOf(this.ds) === 'postgres') {
      return this.ds.transaction(async (em) => {
        await em.query('SELECT id FROM customers WHERE id = $1 FOR UPDATE', [row.customerId]);
        // INSERT … SELECT gives parameters no column type, so each is cast explicitly.
        const types = ['varchar', 'varchar', 'varchar', 'varchar', 'varchar', 'boolean', 'varchar', 'bigint'];
        const params = types.map((t, i) => `$${i + 1}::${t}`).join(', ');
        const res: unknown[] = await em.query(
          `INSERT INTO webhooks (${cols.join(', ')}) SELECT ${params} WHERE (SELECT COUNT(*) FROM webhooks WHERE customer_id = $2::varchar) < $${values.length + 1}::int RETURNING id`,
          [...values, max],
        );
        return res.length === 1;
      });
    }
    const params = values.map(() => '?').join(', ');
    const sqliteValues = values.map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v));
    const res: unknown[] = await this.ds.query(
      `INSERT INTO webhooks (${cols.join(', ')}) SELECT ${params} WHERE (SELECT COUNT(*) FROM webhooks WHERE customer_id = ?) < ? RETURNING id`,
      [...sqliteValues, row.customerId, max],
    );
    return res.length === 1;
  }

  /** Keyset page over (id) DESC: ids are time-ordered ULIDs, so this is newest first. */
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
