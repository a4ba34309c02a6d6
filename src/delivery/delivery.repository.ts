import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import { DataSource, EntityManager, In } from 'typeorm';
import { newUlid } from '../common/ids';
import { dialectOf } from '../database/data-source';
import type { PageRequest } from '../pagination/page';
import { AttemptEntity } from './attempt.entity';
import { DeliveryEntity, DeliveryState } from './delivery.entity';
import { EventEntity } from './event.entity';

/** What the worker needs of a claimed row. */
export interface ClaimedDelivery {
  id: string;
  eventId: string;
  webhookId: string;
  attempts: number;
}

export interface NewEvent {
  id: string;
  type: string;
  subreddit: string;
  payload: string;
  createdAt: Date;
}

export interface Subscriber {
  id: string;
  customerId: string;
}

/** How one attempt ended, as written back under the lease. */
export interface AttemptRecord {
  attempt: Omit<AttemptEntity, 'id' | 'deliveryId'>;
  state: Extract<DeliveryState, 'pending' | 'delivered' | 'failed'>;
  nextAttemptAt: Date | null;
  lastError: string | null;
  webhookStatus: 'delivered' | 'retrying' | 'failed';
}

const INSERT_CHUNK = 500;
export const DELIVERY_NOTIFY_CHANNEL = 'trendhooks_deliveries';

/**
 * The delivery queue lives in SQL (graphile-worker style). On PostgreSQL claims use
 * `FOR UPDATE SKIP LOCKED`, so many workers share the queue without sending a row twice inside a
 * lease. On SQLite every multi-statement write runs as one synchronous better-sqlite3
 * transaction: nothing else in the process can interleave with it (TypeORM shares a single
 * connection there, so an async transaction would swallow other requests' statements).
 */
@Injectable()
export class DeliveryRepository {
  private readonly pg: boolean;
  private stmts?: ReturnType<DeliveryRepository['prepareSqlite']>;

  constructor(@InjectDataSource() private readonly ds: DataSource) {
    this.pg = dialectOf(ds) === 'postgres';
  }

  private get sqlite(): SqliteDatabase {
    return (this.ds.driver as unknown as { databaseConnection: SqliteDatabase }).databaseConnection;
  }

  private prepareSqlite() {
    const db = this.sqlite;
    return {
      insertEvent: db.prepare('INSERT INTO events (id, type, subreddit, payload, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING'),
      subscribers: db.prepare('SELECT id, customer_id FROM webhooks WHERE event = ? AND subreddit = ?'),
      insertDelivery: db.prepare(
        `INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, next_attempt_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, 'pending', 0, ?, ?, ?) ON CONFLICT DO NOTHING`,
      ),
      claim: db.prepare(
        `UPDATE deliveries SET state = 'delivering', lease_owner = ?, next_attempt_at = ?, updated_at = ?
         WHERE id IN (SELECT id FROM deliveries WHERE state IN ('pending', 'delivering') AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?)
         RETURNING id, event_id, webhook_id, attempts`,
      ),
      complete: db.prepare(
        `UPDATE deliveries SET state = ?, attempts = attempts + 1, next_attempt_at = ?, lease_owner = NULL, last_error = ?,
           last_response_code = ?, updated_at = ?, delivered_at = CASE WHEN ? = 'delivered' THEN ? ELSE delivered_at END
         WHERE id = ? AND lease_owner = ? AND state = 'delivering'`,
      ),
      insertAttempt: db.prepare(
        `INSERT INTO delivery_attempts (id, delivery_id, attempt_no, started_at, duration_ms, status_code, outcome, error_class, response_excerpt)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      touchWebhook: db.prepare('UPDATE webhooks SET last_delivery_at = ?, last_status = ?, last_response_code = ? WHERE id = ?'),
      cancel: db.prepare(`UPDATE deliveries SET state = 'cancelled', next_attempt_at = NULL, lease_owner = NULL, updated_at = ? WHERE id = ? AND lease_owner = ?`),
    };
  }

  private get sq() {
    this.stmts ??= this.prepareSqlite();
    return this.stmts;
  }

  /**
   * Writes the event and one delivery per subscriber in one transaction (the outbox), unless the
   * event already exists. Returns how many deliveries were created (0 for a replayed event).
   */
  async insertEventWithDeliveries(
    event: NewEvent,
    /** 'subscribers': every webhook on the event's kind and subreddit; or exactly these webhooks (test events). */
    targeted: 'subscribers' | Subscriber[],
    idFor: (webhookId: string) => string,
    now: Date,
  ): Promise<{ created: boolean; deliveries: number }> {
    const nowMs = now.getTime();
    if (!this.pg) {
      const s = this.sq;
      return this.sqlite.transaction(() => {
        const ins = s.insertEvent.run(event.id, event.type, event.subreddit, event.payload, event.createdAt.getTime());
        if (ins.changes === 0) return { created: false, deliveries: 0 };
        const subs: Subscriber[] =
          targeted === 'subscribers'
            ? (s.subscribers.all(event.type, event.subreddit) as { id: string; customer_id: string }[]).map((r) => ({ id: r.id, customerId: r.customer_id }))
            : targeted;
        let n = 0;
        for (const w of subs) n += s.insertDelivery.run(idFor(w.id), event.id, w.id, w.customerId, nowMs, nowMs, nowMs).changes;
        return { created: true, deliveries: n };
      })();
    }
    return this.ds.transaction(async (em) => {
      const ins: unknown[] = await em.query(
        'INSERT INTO events (id, type, subreddit, payload, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING RETURNING id',
        [event.id, event.type, event.subreddit, event.payload, event.createdAt.getTime()],
      );
      if (ins.length === 0) return { created: false, deliveries: 0 };
      const subs: Subscriber[] =
        targeted === 'subscribers'
          ? ((await em.query('SELECT id, customer_id FROM webhooks WHERE event = $1 AND subreddit = $2', [event.type, event.subreddit])) as { id: string; customer_id: string }[]).map((r) => ({ id: r.id, customerId: r.customer_id }))
          : targeted;
      let n = 0;
      for (let i = 0; i < subs.length; i += INSERT_CHUNK) {
        const chunk = subs.slice(i, i + INSERT_CHUNK);
        const params: unknown[] = [];
        const values = chunk.map((w, j) => {
          params.push(idFor(w.id), event.id, w.id, w.customerId);
          const b = j * 4;
          return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, 'pending', 0, $${chunk.length * 4 + 1}::bigint, $${chunk.length * 4 + 1}::bigint, $${chunk.length * 4 + 1}::bigint)`;
        });
        params.push(nowMs);
        const res: unknown[] = await em.query(
          `INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, next_attempt_at, created_at, updated_at)
           VALUES ${values.join(', ')} ON CONFLICT DO NOTHING RETURNING id`,
          params,
        );
        n += res.length;
      }
      // Delivered to LISTENing workers when the transaction commits.
      if (n > 0) await em.query(`SELECT pg_notify('${DELIVERY_NOTIFY_CHANNEL}', '')`);
      return { created: true, deliveries: n };
    });
  }

  /**
   * Leases up to `limit` due deliveries to `owner` until `leaseUntil`. A row whose lease expired
   * (its worker died) is due again by construction: next_attempt_at holds the lease expiry.
   */
  async claimDue(owner: string, now: Date, leaseUntil: Date, limit: number): Promise<ClaimedDelivery[]> {
    type Row = { id: string; event_id: string; webhook_id: string; attempts: number };
    let rows: Row[];
    if (!this.pg) {
      rows = this.sq.claim.all(owner, leaseUntil.getTime(), now.getTime(), now.getTime(), limit) as Row[];
    } else {
      const res = await this.ds.query(
        `UPDATE deliveries SET state = 'delivering', lease_owner = $1, next_attempt_at = $2, updated_at = $3
         WHERE id IN (
           SELECT id FROM deliveries WHERE state IN ('pending', 'delivering') AND next_attempt_at <= $3
           ORDER BY next_attempt_at LIMIT $4 FOR UPDATE SKIP LOCKED)
         RETURNING id, event_id, webhook_id, attempts`,
        [owner, leaseUntil.getTime(), now.getTime(), limit],
      );
      rows = (res as [Row[], number])[0]; // TypeORM's pg driver answers UPDATE … RETURNING with [rows, count]
    }
    return rows.map((r) => ({ id: r.id, eventId: r.event_id, webhookId: r.webhook_id, attempts: Number(r.attempts) }));
  }

  /**
   * Records one attempt and moves the delivery on, fenced on the lease: when another worker took
   * the row over (this one stalled past its lease), the attempt is still logged but the state is
   * left to the new owner. Returns whether the lease was still held.
   */
  async recordAttempt(d: ClaimedDelivery, owner: string, rec: AttemptRecord, now: Date): Promise<boolean> {
    const a = rec.attempt;
    const nowMs = now.getTime();
    const next = rec.nextAttemptAt ? rec.nextAttemptAt.getTime() : null;
    const attemptId = newUlid();
    if (!this.pg) {
      const s = this.sq;
      return this.sqlite.transaction(() => {
        s.insertAttempt.run(attemptId, d.id, a.attemptNo, a.startedAt.getTime(), a.durationMs, a.statusCode, a.outcome, a.errorClass, a.responseExcerpt);
        const held = s.complete.run(rec.state, next, rec.lastError, a.statusCode, nowMs, rec.state, nowMs, d.id, owner).changes === 1;
        if (held) s.touchWebhook.run(a.startedAt.getTime(), rec.webhookStatus, a.statusCode, d.webhookId);
        return held;
      })();
    }
    return this.ds.transaction(async (em) => {
      await em.query(
        `INSERT INTO delivery_attempts (id, delivery_id, attempt_no, started_at, duration_ms, status_code, outcome, error_class, response_excerpt)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [attemptId, d.id, a.attemptNo, a.startedAt.getTime(), a.durationMs, a.statusCode, a.outcome, a.errorClass, a.responseExcerpt],
      );
      const res = await em.query(
        `UPDATE deliveries SET state = $1::varchar, attempts = attempts + 1, next_attempt_at = $2::bigint, lease_owner = NULL,
           last_error = $3, last_response_code = $4, updated_at = $5::bigint,
           delivered_at = CASE WHEN $1::varchar = 'delivered' THEN $5::bigint ELSE delivered_at END
         WHERE id = $6 AND lease_owner = $7 AND state = 'delivering' RETURNING id`,
        [rec.state, next, rec.lastError, a.statusCode, nowMs, d.id, owner],
      );
      const held = (res as [unknown[], number])[1] === 1;
      if (held) {
        await em.query('UPDATE webhooks SET last_delivery_at = $1, last_status = $2, last_response_code = $3 WHERE id = $4', [
          a.startedAt.getTime(),
          rec.webhookStatus,
          a.statusCode,
          d.webhookId,
        ]);
      }
      return held;
    });
  }

  /** The claimed delivery's webhook is gone: stop it without an attempt. */
  async cancelClaimed(d: ClaimedDelivery, owner: string, now: Date): Promise<void> {
    if (!this.pg) {
      this.sq.cancel.run(now.getTime(), d.id, owner);
      return;
    }
    await this.ds.query(`UPDATE deliveries SET state = 'cancelled', next_attempt_at = NULL, lease_owner = NULL, updated_at = $1 WHERE id = $2 AND lease_owner = $3`, [
      now.getTime(),
      d.id,
      owner,
    ]);
  }

  /** Deleting a webhook stops its queued deliveries (an in-flight one re-checks before it sends). */
  async cancelForWebhook(em: EntityManager, webhookId: string, now: Date): Promise<void> {
    await em
      .createQueryBuilder()
      .update(DeliveryEntity)
      .set({ state: 'cancelled', nextAttemptAt: null, leaseOwner: null, updatedAt: now })
      .where('webhook_id = :webhookId AND state IN (:...states)', { webhookId, states: ['pending', 'delivering'] })
      .execute();
  }

  /** Gives up the leases of a stopping worker so others pick its rows up at once. */
  async releaseLeases(owner: string, ids: string[], now: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.ds
      .createQueryBuilder()
      .update(DeliveryEntity)
      .set({ state: 'pending', leaseOwner: null, nextAttemptAt: now, updatedAt: now })
      .where('lease_owner = :owner AND state = :state AND id IN (:...ids)', { owner, state: 'delivering', ids })
      .execute();
  }

  async webhookExists(webhookId: string): Promise<boolean> {
    if (!this.pg) return this.sqlite.prepare('SELECT 1 FROM webhooks WHERE id = ?').get(webhookId) !== undefined;
    return ((await this.ds.query('SELECT 1 FROM webhooks WHERE id = $1', [webhookId])) as unknown[]).length > 0;
  }

  findEvents(ids: string[]): Promise<EventEntity[]> {
    return this.ds.getRepository(EventEntity).findBy({ id: In(ids) });
  }

  /** A webhook's deliveries, newest first, keyset over (created_at, id). */
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

  /** Manual retry: due now, same id; a delivery in flight is left alone. */
  async requeue(id: string, now: Date): Promise<boolean> {
    const res = await this.ds
      .createQueryBuilder()
      .update(DeliveryEntity)
      .set({ state: 'pending', nextAttemptAt: now, leaseOwner: null, updatedAt: now })
      .where('id = :id AND state IN (:...states)', { id, states: ['delivered', 'failed', 'pending', 'cancelled'] })
      .execute();
    return (res.affected ?? 0) > 0;
  }

  /** Queue depth and the age of the oldest due delivery, for metrics and benchmarks. */
  async queueStats(now: Date): Promise<{ due: number; oldestDueMs: number | null }> {
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
