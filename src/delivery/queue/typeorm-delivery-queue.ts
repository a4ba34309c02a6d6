import { DataSource, In, SelectQueryBuilder } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import type { PageRequest } from '../../pagination/page';
import { AttemptEntity } from '../attempt.entity';
import { DeliveryEntity } from '../delivery.entity';
import { deliveryId } from '../delivery-id';
import { EventEntity } from '../event.entity';
import { isTestEventId } from '../../events/catalogue';
import { DeliveryQueue } from './delivery-queue';
import type { ClaimedDelivery, DeliveryFilter, QueueActivityRows, QueueStats, RecoverOptions, RecoverResult, RecoverScope, WebhookHealthCounts } from './types';

/**
 * Rows recover reads (and writes) per round trip: on SQLite one batch holds the event loop, and
 * 200 keep that to a few milliseconds.
 */
export const RECOVER_BATCH = 200;

/** Lets timers and I/O of other requests run before the next batch (a resolved promise would not). */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Held deliveries made pending per transaction when their webhook is resumed. */
const RELEASE_BATCH = 200;

/** Ids per statement of bringForward (well under either database's bound on parameters). */
const BRING_FORWARD_CHUNK = 1000;

/** One event recover may queue: its delivery's id, whether a missing row may be inserted, when it is due. */
export interface RecoverCandidate {
  id: string;
  eventId: string;
  /** The event is not older than the webhook: a missing delivery row is written. */
  insertable: boolean;
  dueAt: number;
}

/**
 * Where recover's walk starts: `since`, or the webhook's creation when later. Events before the
 * subscription are never read, so their number costs nothing and `next_since` never names one.
 */
export function recoverStart(scope: RecoverScope): number {
  return Math.max(scope.since.getTime(), scope.subscribedAt.getTime());
}

/**
 * Up to `limit` rows of the scope's subscription in [recoverStart, until), oldest first, after the
 * keyset position `after` (created_at, id): one range of idx_events_type_subreddit_created.
 * Test events are read too and skipped by the caller, so `limit` bounds the rows a read touches
 * however many test events a customer put in the range (a filter in SQL would read past them all).
 */
export function subscriptionEventsQuery(ds: DataSource, scope: RecoverScope, after: [number, string] | null, limit: number): SelectQueryBuilder<EventEntity> {
  const qb = ds
    .getRepository(EventEntity)
    .createQueryBuilder('e')
    .select('e.id', 'id')
    .addSelect('e.created_at', 'created_at')
    .where('e.type = :type AND e.subreddit = :subreddit AND e.created_at >= :since AND e.created_at < :until', {
      type: scope.type,
      subreddit: scope.subreddit,
      since: recoverStart(scope),
      until: scope.until.getTime(),
    });
  // The redundant `created_at >= :t` keeps it one index range scan, as in deliveryPageQuery.
  if (after) qb.andWhere('e.created_at >= :t AND (e.created_at > :t OR (e.created_at = :t AND e.id > :id))', { t: after[0], id: after[1] });
  return qb.orderBy('e.created_at', 'ASC').addOrderBy('e.id', 'ASC').limit(limit);
}

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

  /**
   * The walk of DeliveryQueue.recover, the same on both databases: batches of RECOVER_BATCH rows
   * in (created_at, id) order from recoverStart, each written (or counted) by the dialect's
   * recoverBatch in one transaction, with the event loop let go between batches (on SQLite each
   * batch runs synchronously: a few milliseconds, then other requests get their turn). Test
   * events count as rows read and are skipped. Due times follow the walk, one millisecond apart
   * and all at or before `now` (the last one `now` - maxEvents + its position): due at once, and
   * claimed oldest first.
   */
  async recover(scope: RecoverScope, now: Date, opts: RecoverOptions): Promise<RecoverResult> {
    let after: [number, string] | null = null;
    let read = 0;
    let queued = 0;
    for (;;) {
      if (read > 0) await yieldToEventLoop();
      const take = Math.min(RECOVER_BATCH, opts.maxEvents - read);
      // One row beyond what fits says whether the cap, not the range, ended the walk.
      const rows: { id: string; created_at: string | number }[] = await subscriptionEventsQuery(this.ds, scope, after, take + 1).getRawMany();
      const batch = rows.slice(0, take);
      const events = batch.filter((e) => !isTestEventId(e.id));
      if (events.length > 0) {
        const candidates = events.map((e, i): RecoverCandidate => ({
          id: deliveryId(e.id, scope.webhookId),
          eventId: e.id,
          insertable: Number(e.created_at) >= scope.subscribedAt.getTime(),
          dueAt: now.getTime() - opts.maxEvents + read + i,
        }));
        queued += await this.recoverBatch(scope, candidates, now, opts.dryRun);
      }
      read += batch.length;
      if (batch.length > 0) after = [Number(batch[batch.length - 1].created_at), batch[batch.length - 1].id];
      if (rows.length <= take) return { queued, nextSince: null, read };
      if (read >= opts.maxEvents) return { queued, nextSince: new Date(Number(rows[take].created_at)), read };
    }
  }

  /**
   * One batch of recover, in one transaction: re-queues the candidates' failed or cancelled
   * deliveries and inserts the missing rows of the insertable ones (never touching a row pending,
   * delivering or delivered); or, `dryRun`, only counts them. Answers how many.
   */
  protected abstract recoverBatch(scope: RecoverScope, candidates: RecoverCandidate[], now: Date, dryRun: boolean): Promise<number>;

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

  async bringForward(ids: readonly string[], putOffUntil: Date, now: Date): Promise<number> {
    let moved = 0;
    for (let i = 0; i < ids.length; i += BRING_FORWARD_CHUNK) {
      const res = await this.ds
        .createQueryBuilder()
        .update(DeliveryEntity)
        .set({ nextAttemptAt: now, updatedAt: now })
        .where('state = :state AND next_attempt_at > :now AND next_attempt_at <= :until AND id IN (:...ids)', {
          state: 'pending',
          now: now.getTime(),
          until: putOffUntil.getTime(),
          ids: ids.slice(i, i + BRING_FORWARD_CHUNK),
        })
        .execute();
      moved += res.affected ?? 0;
    }
    return moved;
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

  /** In the order they were made: a recovered delivery counts its attempts from 1 again, after its earlier ones. */
  attemptsFor(deliveryIds: string[]): Promise<AttemptEntity[]> {
    if (deliveryIds.length === 0) return Promise.resolve([]);
    return this.ds.getRepository(AttemptEntity).find({ where: { deliveryId: In(deliveryIds) }, order: { deliveryId: 'ASC', startedAt: 'ASC', attemptNo: 'ASC' } });
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
      .where('webhook_id = :webhookId AND state IN (:...states)', { webhookId, states: ['pending', 'held'] })
      .execute();
    return res.affected ?? 0;
  }

  async holdPendingForWebhook(webhookId: string, now: Date): Promise<number> {
    const res = await this.ds
      .createQueryBuilder()
      .update(DeliveryEntity)
      .set({ state: 'held', nextAttemptAt: null, leaseOwner: null, updatedAt: now })
      .where('webhook_id = :webhookId AND state = :state', { webhookId, state: 'pending' })
      .execute();
    return res.affected ?? 0;
  }

  async holdClaimed(d: ClaimedDelivery, owner: string, now: Date): Promise<boolean> {
    const res = await this.ds
      .createQueryBuilder()
      .update(DeliveryEntity)
      .set({ state: 'held', attempts: () => 'attempts - 1', nextAttemptAt: null, leaseOwner: null, updatedAt: now })
      .where('id = :id AND lease_owner = :owner', { id: d.id, owner })
      .andWhere("webhook_id IN (SELECT w.id FROM webhooks w WHERE w.id = :webhookId AND w.disabled_at IS NOT NULL AND w.disabled_reason = 'manual')", { webhookId: d.webhookId })
      .execute();
    return (res.affected ?? 0) > 0;
  }

  async releaseHeldForWebhook(webhookId: string, now: Date, keepSince: Date, expiredError: string): Promise<{ released: number; expired: number }> {
    const expired = await this.ds
      .createQueryBuilder()
      .update(DeliveryEntity)
      .set({ state: 'cancelled', lastError: expiredError, updatedAt: now })
      .where('webhook_id = :webhookId AND state = :state AND created_at < :keepSince', { webhookId, state: 'held', keepSince: keepSince.getTime() })
      .execute();
    const repo = this.ds.getRepository(DeliveryEntity);
    const total = await repo.count({ where: { webhookId, state: 'held' } });
    let released = 0;
    // Oldest first (idx_deliveries_webhook_created), one due time each: claims take them in order.
    for (let seen = 0; seen < total; ) {
      if (seen > 0) await yieldToEventLoop();
      const rows = await repo.find({ select: { id: true }, where: { webhookId, state: 'held' }, order: { createdAt: 'ASC', id: 'ASC' }, take: RELEASE_BATCH });
      if (rows.length === 0) break;
      await this.ds.transaction(async (tx) => {
        for (const [i, r] of rows.entries()) {
          const res = await tx
            .createQueryBuilder()
            .update(DeliveryEntity)
            .set({ state: 'pending', nextAttemptAt: new Date(now.getTime() - total + seen + i), updatedAt: now })
            .where('id = :id AND state = :state', { id: r.id, state: 'held' })
            .execute();
          released += res.affected ?? 0;
        }
      });
      seen += rows.length;
    }
    return { released, expired: expired.affected ?? 0 };
  }

  async activity(now: Date, window: number): Promise<QueueActivityRows> {
    const escape = this.ds.driver.escapeQueryWithParameters as (sql: string, parameters: object, nativeParameters: object) => [string, unknown[]];
    const [sql, params] = escape.call(this.ds.driver, ACTIVITY_SQL, { now: now.getTime(), window }, {});
    const rows: { customer_id: string; lease_owner: string | null; n: string | number }[] = await this.ds.query(sql, params);
    const out: QueueActivityRows = { dueCustomers: [], leased: [] };
    for (const r of rows) {
      if (r.lease_owner === null) out.dueCustomers.push(r.customer_id);
      else out.leased.push({ customer: r.customer_id, owner: r.lease_owner, n: Number(r.n) });
    }
    return out;
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

/**
 * DeliveryQueue.activity: the live leases per customer and owner (delivering rows whose lease has
 * not expired: at most the slots of all workers), then the customers among the first :window due
 * pending rows (lease_owner NULL marks them). Both are ranges of idx_deliveries_due.
 */
const ACTIVITY_SQL = `SELECT customer_id, lease_owner, COUNT(*) AS n FROM deliveries WHERE state = 'delivering' AND next_attempt_at > :now GROUP BY customer_id, lease_owner
  UNION ALL
  SELECT DISTINCT customer_id, NULL AS lease_owner, 0 AS n FROM (SELECT customer_id FROM deliveries WHERE state = 'pending' AND next_attempt_at <= :now ORDER BY next_attempt_at LIMIT :window) due`;
