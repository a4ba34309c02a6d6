import { Injectable } from '@nestjs/common';
import { InjectTrendhooksDataSource } from '../../../core/tokens';
import type { Database } from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { sqliteHandle } from '../../../database/data-source';
import { WebhookDeliveryStatus, WebhookOutcome } from '../../status/webhook-delivery-status';
import { attemptUlid } from '../attempt-id';
import { ClaimRow, toEvent, toWebhook } from '../claim-row';
import { TypeOrmDeliveryQueue } from '../typeorm-delivery-queue';
import { RECORD_BATCH_MAX } from '../types';
import type { AttemptRecord, ClaimedDelivery, ClaimedWebhook, ClaimedWork, ClaimRequest, NewEvent, RecordInput, RecordResult, Subscriber } from '../types';
import { CANCEL } from './sql/cancel';
import { CLAIM, CLAIMED_EVENT, CLAIMED_WEBHOOKS, EXPIRED_LEASES } from './sql/claim';
import { COMPLETE } from './sql/complete';
import { INSERT_ATTEMPT } from './sql/insert-attempt';
import { INSERT_DELIVERY } from './sql/insert-delivery';
import { INSERT_EVENT } from './sql/insert-event';
import { RENEW_LEASES } from './sql/renew-leases';
import { SUBSCRIBERS } from './sql/subscribers';
import { WEBHOOK_EXISTS } from './sql/webhook-exists';

function prepare(db: Database) {
  return {
    insertEvent: db.prepare(INSERT_EVENT),
    subscribers: db.prepare(SUBSCRIBERS),
    insertDelivery: db.prepare(INSERT_DELIVERY),
    expiredLeases: db.prepare(EXPIRED_LEASES),
    claim: db.prepare(CLAIM),
    webhooks: db.prepare(CLAIMED_WEBHOOKS),
    event: db.prepare(CLAIMED_EVENT),
    exists: db.prepare(WEBHOOK_EXISTS).pluck(),
    complete: db.prepare(COMPLETE),
    insertAttempt: db.prepare(INSERT_ATTEMPT),
    cancel: db.prepare(CANCEL),
    renew: db.prepare(RENEW_LEASES).pluck(),
  };
}

/**
 * SQLite: statements prepared once on the one connection, and every multi-statement write as one
 * synchronous better-sqlite3 transaction: nothing else in the process can interleave with it
 * (TypeORM shares that connection, so an async transaction would swallow other requests' statements).
 */
@Injectable()
export class SqliteDeliveryQueue extends TypeOrmDeliveryQueue {
  private stmts?: ReturnType<typeof prepare>;

  constructor(
    @InjectTrendhooksDataSource() ds: DataSource,
    private readonly webhookStatus: WebhookDeliveryStatus,
  ) {
    super(ds);
  }

  private get db(): Database {
    return sqliteHandle(this.ds);
  }

  private get sq() {
    this.stmts ??= prepare(this.db);
    return this.stmts;
  }

  async insertEventWithDeliveries(
    event: NewEvent,
    targeted: 'subscribers' | Subscriber[],
    idFor: (webhookId: string) => string,
    now: Date,
  ): Promise<{ created: boolean; deliveries: number }> {
    const nowMs = now.getTime();
    const s = this.sq;
    return this.db.transaction(() => {
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

  async claimDue(owner: string, now: Date, leaseUntil: Date, limit: number): Promise<ClaimedWork[]> {
    return this.db.transaction(() => this.claim({ owner, now, leaseUntil, limit }))();
  }

  /** Runs inside the caller's transaction. */
  private claim(req: ClaimRequest): ClaimedWork[] {
    const s = this.sq;
    const expired = new Map<string, number>();
    for (const r of s.expiredLeases.all({ now: req.now.getTime(), limit: req.limit }) as { id: string; updated_at: number }[]) expired.set(r.id, Number(r.updated_at));
    const rows = s.claim.all({ owner: req.owner, leaseUntil: req.leaseUntil.getTime(), now: req.now.getTime(), limit: req.limit }) as ClaimRow[];
    if (rows.length === 0) return [];
    // A claim holds few distinct webhooks and events (a fan-out is one event): each is read and
    // converted once, and shared by its rows.
    const found = new Map<string, ClaimRow>();
    for (const w of s.webhooks.all(JSON.stringify(rows.map((r) => r.webhook_id))) as ClaimRow[]) found.set(w.id, w);
    const webhooks = new Map<string, ClaimedWebhook | null>();
    const events = new Map<string, ClaimedWork['event']>();
    return rows.map((r) => {
      let webhook = webhooks.get(r.webhook_id);
      if (webhook === undefined) webhooks.set(r.webhook_id, (webhook = toWebhook(r.webhook_id, found.get(r.webhook_id))));
      let event = events.get(r.event_id);
      if (event === undefined) events.set(r.event_id, (event = toEvent(r.event_id, s.event.get(r.event_id) as ClaimRow | undefined)));
      const lost = expired.get(r.id);
      return { id: r.id, eventId: r.event_id, webhookId: r.webhook_id, attempts: Number(r.attempts), lostSince: lost === undefined ? null : new Date(lost), webhook, event };
    });
  }

  async recordAttempts(inputs: RecordInput[], claim?: ClaimRequest): Promise<RecordResult> {
    if (inputs.length > RECORD_BATCH_MAX) throw new Error(`at most ${RECORD_BATCH_MAX} outcomes per batch`);
    const s = this.sq;
    return this.db.transaction(() => {
        const held: boolean[] = new Array<boolean>(inputs.length);
        const outcomes: WebhookOutcome[] = [];
        inputs.forEach(({ d, owner, rec, now }, i) => {
          const a = rec.attempt;
          const nowMs = now.getTime();
          const next = rec.nextAttemptAt ? rec.nextAttemptAt.getTime() : null;
          s.insertAttempt.run(attemptUlid(), d.id, a.attemptNo, a.startedAt.getTime(), a.durationMs, a.statusCode, a.outcome, a.errorClass, a.responseExcerpt);
          held[i] = s.complete.run(rec.state, a.attemptNo, next, rec.lastError, a.statusCode, nowMs, rec.state, nowMs, d.id, owner).changes === 1;
          if (held[i]) outcomes.push({ webhookId: d.webhookId, at: a.startedAt, status: rec.webhookStatus, responseCode: a.statusCode });
        });
        // Synchronous on SQLite: part of this transaction, at no extra cost.
        void this.webhookStatus.recordLatest(outcomes);
        return { held, claimed: claim && claim.limit > 0 ? this.claim(claim) : [] };
      })();
  }

  async renewLeases(owner: string, ids: string[], leaseUntil: Date): Promise<string[]> {
    if (ids.length === 0) return [];
    return this.sq.renew.all({ owner, ids: JSON.stringify(ids), leaseUntil: leaseUntil.getTime() }) as string[];
  }

  async logAttempt(deliveryId: string, a: AttemptRecord['attempt']): Promise<void> {
    this.sq.insertAttempt.run(attemptUlid(), deliveryId, a.attemptNo, a.startedAt.getTime(), a.durationMs, a.statusCode, a.outcome, a.errorClass, a.responseExcerpt);
  }

  async cancelClaimed(d: ClaimedDelivery, owner: string, now: Date): Promise<void> {
    this.sq.cancel.run(now.getTime(), d.id, owner);
  }

  async webhookExists(webhookId: string): Promise<boolean> {
    return this.sq.exists.get(webhookId) !== undefined;
  }
}
