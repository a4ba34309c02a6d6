import { DataSource, In, SelectQueryBuilder } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import type { PageRequest } from '../../pagination/page';
import { AttemptEntity } from '../attempt.entity';
import { DeliveryEntity } from '../delivery.entity';
import { DeliveryQueue } from './delivery-queue';
import type { DeliveryFilter, QueueStats, WebhookHealthCounts } from './types';

/**
 * A page of a webhook's delivery log (see DeliveryQueue.pageForWebhook). Every bound is on
 * idx_deliveries_webhook_created (webhook_id, created_at, id): one index range scan on both
 * databases, the state checked on the rows read (test/stores/delivery-indexes.e2e-spec.ts).
 */
export function deliveryPageQuery(ds: DataSource, webhookId: string, req: PageRequest, filter: DeliveryFilter = {}): SelectQueryBuilder<DeliveryEntity> {
  const qb = ds.getRepository(DeliveryEntity).createQueryBuilder('d').where('d.webhook_id = :webhookId', { webhookId });
  if (filter.state !== undefined) qb.andWhere('d.state = :state', { state: filter.state });
  if (filter.since !== undefined) qb.andWhere('d.created_at >= :since', { since: filter.since.getTime() });
  if (filter.until !== undefined) qb.andWhere('d.created_at < :until', { until: filter.until.getTime() });
  const pos = req.before ?? req.after;
  if (pos) {
    const op = req.before ? '>' : '<';
    // The redundant `created_at op= :t` bound keeps it one index range scan on both databases.
    qb.andWhere(`d.created_at ${op}= :t AND (d.created_at ${op} :t OR (d.created_at = :t AND d.id ${op} :id))`, { t: Number(pos[0]), id: String(pos[1]) });
  }
  const dir = req.before ? 'ASC' : 'DESC';
  return qb.orderBy('d.created_at', dir).addOrderBy('d.id', dir).limit(req.limit + 1);
}

/**
 * Health counts per webhook over the attempts of its deliveries created since :since: the
 * deliveries come from a range scan of idx_deliveries_webhook_created, their attempts from
 * idx_attempts_delivery, once (MATERIALIZED: SQLite would otherwise read them twice). Plain SQL both databases read alike.
 */
export const HEALTH_SQL = `WITH x AS MATERIALIZED (
    SELECT d.webhook_id AS webhook_id, a.outcome AS outcome, a.started_at AS started_at
      FROM deliveries d JOIN delivery_attempts a ON a.delivery_id = d.id
     WHERE d.webhook_id IN (:...ids) AND d.created_at >= :since),
  ok AS (SELECT webhook_id, MAX(started_at) AS last_ok FROM x WHERE outcome = 'delivered' GROUP BY webhook_id)
SELECT x.webhook_id AS webhook_id, COUNT(*) AS attempts,
       SUM(CASE WHEN x.outcome = 'delivered' THEN 1 ELSE 0 END) AS delivered,
       SUM(CASE WHEN x.outcome <> 'delivered' AND (ok.last_ok IS NULL OR x.started_at > ok.last_ok) THEN 1 ELSE 0 END) AS failing
  FROM x LEFT JOIN ok ON ok.webhook_id = x.webhook_id
 GROUP BY x.webhook_id`;

/**
 * What both databases answer the same way through TypeORM: the delivery log's reads, manual
 * retry, releasing leases and the queue's depth (none of them on the worker's hot path). Each
 * dialect's queue extends this with its own claims and writes.
 */
export abstract class TypeOrmDeliveryQueue extends DeliveryQueue {
  protected constructor(protected readonly ds: DataSource) {
    super();
  }

  async releaseLeases(owner: string, ids: string[], now: Date, what: 'unstarted' | 'in_flight', dueAt?: Date): Promise<void> {
    if (ids.length === 0) return;
    const set: QueryDeepPartialEntity<DeliveryEntity> =
      what === 'unstarted' ? { state: 'pending', attempts: () => 'attempts - 1', leaseOwner: null, nextAttemptAt: dueAt ?? now, updatedAt: now } : { nextAttemptAt: now };
    await this.ds
      .createQueryBuilder()
      .update(DeliveryEntity)
      .set(set)
      .where('lease_owner = :owner AND state = :state AND id IN (:...ids)', { owner, state: 'delivering', ids })
      .execute();
  }

  pageForWebhook(webhookId: string, req: PageRequest, filter: DeliveryFilter = {}): Promise<DeliveryEntity[]> {
    return deliveryPageQuery(this.ds, webhookId, req, filter).getMany();
  }

  async healthOf(webhookIds: readonly string[], since: Date): Promise<Map<string, WebhookHealthCounts>> {
    const out = new Map<string, WebhookHealthCounts>();
    if (webhookIds.length === 0) return out;
    // TypeORM 0.3 reads a third argument (native parameters) that 1.x dropped: `{}` suits both.
    const escape = this.ds.driver.escapeQueryWithParameters as (sql: string, parameters: object, nativeParameters: object) => [string, unknown[]];
    const [sql, params] = escape.call(this.ds.driver, HEALTH_SQL, { ids: [...webhookIds], since: since.getTime() }, {});
    const rows: { webhook_id: string; attempts: string | number; delivered: string | number | null; failing: string | number | null }[] = await this.ds.query(sql, params);
    for (const r of rows) out.set(r.webhook_id, { attempts: Number(r.attempts), delivered: Number(r.delivered ?? 0), failingSinceDelivered: Number(r.failing ?? 0) });
    return out;
  }

  findForWebhook(webhookId: string, id: string): Promise<DeliveryEntity | null> {
    return this.ds.getRepository(DeliveryEntity).findOneBy({ webhookId, id });
  }

  attemptsFor(deliveryIds: string[]): Promise<AttemptEntity[]> {
    if (deliveryIds.length === 0) return Promise.resolve([]);
    return this.ds.getRepository(AttemptEntity).find({ where: { deliveryId: In(deliveryIds) }, order: { deliveryId: 'ASC', attemptNo: 'ASC' } });
  }

  async requeue(id: string, now: Date): Promise<boolean> {
    const res = await this.ds
      .createQueryBuilder()
      .update(DeliveryEntity)
      .set({ state: 'pending', nextAttemptAt: now, leaseOwner: null, updatedAt: now })
      .where('id = :id AND state IN (:...states)', { id, states: ['delivered', 'failed', 'pending', 'cancelled'] })
      .execute();
    return (res.affected ?? 0) > 0;
  }

  async cancelPendingForWebhook(webhookId: string, now: Date, lastError: string): Promise<number> {
    const res = await this.ds
      .createQueryBuilder()
      .update(DeliveryEntity)
      .set({ state: 'cancelled', nextAttemptAt: null, leaseOwner: null, lastError, updatedAt: now })
      .where('webhook_id = :webhookId AND state = :state', { webhookId, state: 'pending' })
      .execute();
    return res.affected ?? 0;
  }

  async queueStats(now: Date): Promise<QueueStats> {
    const row = await this.ds
      .getRepository(DeliveryEntity)
      .createQueryBuilder('d')
      .select('COUNT(*)', 'due')
      .addSelect('MIN(d.next_attempt_at)', 'oldest')
      .where("d.state IN ('pending', 'delivering') AND d.next_attempt_at <= :now", { now: now.getTime() })
      .getRawOne<{ due: string | number; oldest: string | number | null }>();
    return { due: Number(row?.due ?? 0), oldestDueMs: row?.oldest == null ? null : now.getTime() - Number(row.oldest) };
  }
}
