import { DataSource, In } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import type { PageRequest } from '../../pagination/page';
import { AttemptEntity } from '../attempt.entity';
import { DeliveryEntity } from '../delivery.entity';
import { DeliveryQueue } from './delivery-queue';
import type { QueueStats } from './types';

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

  pageForWebhook(webhookId: string, req: PageRequest): Promise<DeliveryEntity[]> {
    const qb = this.ds.getRepository(DeliveryEntity).createQueryBuilder('d').where('d.webhook_id = :webhookId', { webhookId });
    const pos = req.before ?? req.after;
    if (pos) {
      const op = req.before ? '>' : '<';
      // The redundant `created_at op= :t` bound keeps it one index range scan on both databases.
      qb.andWhere(`d.created_at ${op}= :t AND (d.created_at ${op} :t OR (d.created_at = :t AND d.id ${op} :id))`, { t: Number(pos[0]), id: String(pos[1]) });
    }
    const dir = req.before ? 'ASC' : 'DESC';
    return qb.orderBy('d.created_at', dir).addOrderBy('d.id', dir).limit(req.limit + 1).getMany();
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
