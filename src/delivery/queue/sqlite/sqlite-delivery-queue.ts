import { Injectable } from '@nestjs/common';
import { InjectTrendhooksDataSource } from '../../../database/data-source.token';
import type { Database } from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { sqliteHandle, StatementsPerHandle } from '../../../database/data-source';
import { WebhookDeliveryStatus, WebhookOutcome } from '../../status/webhook-delivery-status';
import { GroupBatcher } from '../../group-batcher';
import { attemptUlid } from '../attempt-id';
import { ClaimRow, toEvent, toWebhook } from '../claim-row';
import { eventsKeyset, lowerBound, mergeEventRows, toEventRow } from '../events-keyset';
import { RecoverCandidate, TypeOrmDeliveryQueue } from '../typeorm-delivery-queue';
import { CLAIM_SKIP_WINDOW, RECORD_BATCH_MAX } from '../types';
import type { AttemptRecord, ClaimedDelivery, ClaimedWebhook, ClaimedWork, ClaimRequest, EventRow, EventSubscription, NewEvent, RecordInput, RecordResult, RecoverScope, Subscriber } from '../types';
import { CANCEL } from './sql/cancel';
import { CLAIM, CLAIM_PENDING, CLAIM_PENDING_SKIPPING, CLAIM_SKIPPING, CLAIMED_EVENT, CLAIMED_WEBHOOKS, EXPIRED_LEASES } from './sql/claim';
import { COMPLETE } from './sql/complete';
import { INSERT_ATTEMPT } from './sql/insert-attempt';
import { INSERT_DELIVERY, INSERT_FAN_OUT_DELIVERY } from './sql/insert-delivery';
import { INSERT_EVENT } from './sql/insert-event';
import { RENEW_LEASES } from './sql/renew-leases';
import { DELIVERY_EXISTS, EVENT_EXISTS, FAN_OUT_AT } from './sql/fan-out-state';
import { WEBHOOKS_EXIST } from './sql/webhook-exists';
import { DELIVERY_STATE, eventsOfSubscriptionSql, REQUEUE_FINISHED } from './sql/recover';
import type { PageRequest } from '../../../pagination/page';

/**
 * What one synchronous fan-out transaction may take, COMMIT included, before the event loop gets
 * a turn. The slice loop can only time its own statements; the COMMIT after it (the slice's dirty
 * pages written to the WAL) comes on top, so slices are sized in rows from what the previous ones
 * took whole (see FanOutPace).
 */
const FAN_OUT_SLICE_MS = 8;
/** Subscribers read and inserted per step of a slice, at most. */
const FAN_OUT_PAGE = 256;
/** Rows of a fan-out's first slice, before any has been timed, and the bounds of the later ones. */
const FAN_OUT_FIRST_ROWS = 512;
const FAN_OUT_MIN_ROWS = 64;
const FAN_OUT_MAX_ROWS = 8192;

/**
 * Rows per slice for FAN_OUT_SLICE_MS a transaction, from the rows and wall time (COMMIT included)
 * of the slices so far: the cost of a row changes with the machine, its load, and the size of the
 * indexes being written, so it is measured, not assumed.
 */
export class FanOutPace {
  rows = FAN_OUT_FIRST_ROWS;

  took(rows: number, ms: number): void {
    if (rows === 0) return;
    const fit = (rows * FAN_OUT_SLICE_MS) / Math.max(ms, 0.1);
    // Halfway to the fit: one slow slice (a GC pause, a busy core) does not halve the next one.
    this.rows = Math.round(Math.min(FAN_OUT_MAX_ROWS, Math.max(FAN_OUT_MIN_ROWS, (this.rows + fit) / 2)));
  }
}

function prepare(db: Database) {
  return {
    insertEvent: db.prepare(INSERT_EVENT),
    fanOutAt: db.prepare(FAN_OUT_AT).pluck(),
    eventExists: db.prepare(EVENT_EXISTS).pluck(),
    deliveryExists: db.prepare(DELIVERY_EXISTS).pluck(),
    insertDelivery: db.prepare(INSERT_DELIVERY),
    insertFanOutDelivery: db.prepare(INSERT_FAN_OUT_DELIVERY),
    expiredLeases: db.prepare(EXPIRED_LEASES),
    claim: db.prepare(CLAIM),
    claimPending: db.prepare(CLAIM_PENDING),
    claimSkipping: db.prepare(CLAIM_SKIPPING),
    claimPendingSkipping: db.prepare(CLAIM_PENDING_SKIPPING),
    webhooks: db.prepare(CLAIMED_WEBHOOKS),
    event: db.prepare(CLAIMED_EVENT),
    existing: db.prepare(WEBHOOKS_EXIST).pluck(),
    complete: db.prepare(COMPLETE),
    insertAttempt: db.prepare(INSERT_ATTEMPT),
    cancel: db.prepare(CANCEL),
    renew: db.prepare(RENEW_LEASES).pluck(),
    requeueFinished: db.prepare(REQUEUE_FINISHED),
    deliveryState: db.prepare(DELIVERY_STATE).pluck(),
    eventsFirst: db.prepare(eventsOfSubscriptionSql(null, 'DESC')),
    eventsAfter: db.prepare(eventsOfSubscriptionSql('<', 'DESC')),
    eventsBefore: db.prepare(eventsOfSubscriptionSql('>', 'ASC')),
  };
}

/**
 * SQLite: statements prepared once on the one connection, and every multi-statement write as one
 * synchronous better-sqlite3 transaction: nothing else in the process can interleave with it
 * (TypeORM shares that connection, so an async transaction would swallow other requests' statements).
 * A fan-out is the exception: its deliveries go in slices of a few milliseconds each, yielding
 * the event loop between them (see fanOutRest).
 */
@Injectable()
export class SqliteDeliveryQueue extends TypeOrmDeliveryQueue {
  private readonly statements: StatementsPerHandle<ReturnType<typeof prepare>>;

  /**
   * The pre-send existence checks asked together share one statement (see webhookExists): a
   * worker sending a fan-out asks once per delivery, and a statement call costs more than the
   * index lookup in it. "Together" is the current callback and its microtasks (every attempt a
   * claim starts reaches its check in them), not the event-loop turn: the statement is synchronous,
   * and waiting a turn only delayed each send by one poll for I/O, which spread the attempts'
   * ends over more turns and so made the outcome batches (one transaction and claim each) smaller.
   */
  private readonly existence = new GroupBatcher<string, boolean>((ids) => this.existingWebhooks(ids), { maxBatch: 1000, flush: 'microtasks' });

  constructor(
    @InjectTrendhooksDataSource() ds: DataSource,
    private readonly webhookStatus: WebhookDeliveryStatus,
  ) {
    super(ds);
    this.statements = new StatementsPerHandle(ds, prepare);
  }

  private get db(): Database {
    return sqliteHandle(this.ds);
  }

  private get sq() {
    return this.statements.get();
  }

  async insertEventWithDeliveries(
    event: NewEvent,
    targeted: readonly Subscriber[],
    idFor: (webhookId: string) => string,
    now: Date,
  ): Promise<{ created: boolean; deliveries: number }> {
    const nowMs = now.getTime();
    const s = this.sq;
    // The event row and the first slice of its deliveries commit together: a stored event always
    // has its first deliveries, so a replay can tell an unfinished fan-out from a finished one.
    const pace = new FanOutPace();
    const t = performance.now();
    // IMMEDIATE, as every write transaction here: takes the write lock up front (see claimDue).
    const first = this.db.transaction(() => {
      if (s.insertEvent.run(event.id, event.type, event.subreddit, event.payload, event.createdAt.getTime()).changes === 0) return null;
      return this.fanOutSlice(event, targeted, idFor, nowMs, Number.MAX_SAFE_INTEGER, -1, pace.rows);
    }).immediate();
    if (first === null) return { created: false, deliveries: await this.resumeFanOut(event, targeted, idFor) };
    pace.took(first.rows, performance.now() - t);
    return { created: true, deliveries: first.n + (first.done ? 0 : await this.fanOutRest(event, targeted, idFor, nowMs, Number.MAX_SAFE_INTEGER, first.after, pace)) };
  }

  /**
   * The remaining slices of a fan-out, each its own short transaction, yielding to the event loop
   * between them: however many subscribers, no synchronous call holds the loop (or the connection)
   * for much longer than FAN_OUT_SLICE_MS, its COMMIT included. The caller's promise settles once every slice committed,
   * so an acknowledged emit has all its deliveries; a process that dies between slices leaves a
   * stored event with part of them, which the replay of the event completes (resumeFanOut).
   */
  private async fanOutRest(event: NewEvent, targeted: readonly Subscriber[], idFor: (webhookId: string) => string, nowMs: number, bornBy: number, after: number, pace = new FanOutPace()): Promise<number> {
    let n = 0;
    for (;;) {
      await new Promise<void>((r) => setImmediate(r));
      const t = performance.now();
      // IMMEDIATE: reads the subscribers, then writes (see claimDue).
      const slice = this.db.transaction(() => this.fanOutSlice(event, targeted, idFor, nowMs, bornBy, after, pace.rows)).immediate();
      pace.took(slice.rows, performance.now() - t);
      n += slice.n;
      if (slice.done) return n;
      after = slice.after;
    }
  }

  /**
   * Runs inside the caller's transaction: inserts the deliveries of `targeted` after index `after`
   * in pages, until they run out, `maxRows` were read, or the statements alone took
   * FAN_OUT_SLICE_MS. Only endpoints created by `bornBy` that are not disabled get one.
   * `n`: deliveries created; `rows`: targets read.
   */
  private fanOutSlice(
    event: NewEvent,
    targeted: readonly Subscriber[],
    idFor: (webhookId: string) => string,
    nowMs: number,
    bornBy: number,
    after: number,
    maxRows: number,
  ): { n: number; rows: number; after: number; done: boolean } {
    const s = this.sq;
    const started = performance.now();
    let n = 0;
    let rows = 0;
    for (;;) {
      const size = Math.min(FAN_OUT_PAGE, maxRows - rows);
      const page = targeted.slice(after + 1, after + 1 + size);
      for (const w of page) n += s.insertFanOutDelivery.run(idFor(w.id), event.id, nowMs, nowMs, nowMs, w.id, bornBy).changes;
      rows += page.length;
      if (page.length < size) return { n, rows, after, done: true };
      after += page.length;
      if (rows >= maxRows || performance.now() - started >= FAN_OUT_SLICE_MS) return { n, rows, after, done: false };
    }
  }

  /**
   * A replayed event: nothing to do when its fan-out finished, i.e. when the last subscriber (in
   * slice order) that existed when it started has its delivery. Otherwise the process died in the
   * middle of it: the fan-out runs again over those subscribers, creating only the missing deliveries.
   */
  private async resumeFanOut(event: NewEvent, targeted: readonly Subscriber[], idFor: (webhookId: string) => string): Promise<number> {
    const s = this.sq;
    const startedAt = s.fanOutAt.get(event.id) as number | bigint | undefined;
    if (startedAt === undefined) return 0; // no deliveries in the first slice: it had no subscribers
    const bornBy = Number(startedAt);
    // The source answers oldest first: an endpoint created since the fan-out started comes last and
    // gets nothing (bornBy), so the check then finds no delivery and runs the fan-out again, which
    // only costs the work of finding each delivery there.
    const last = targeted[targeted.length - 1]?.id;
    if (last === undefined || s.deliveryExists.get(idFor(last)) !== undefined) return 0;
    return this.fanOutRest(event, targeted, idFor, bornBy, bornBy, -1);
  }

  /** Only an event stored without deliveries is known complete: a fan-out with deliveries may have been cut short between slices. */
  async replayIsComplete(eventId: string): Promise<boolean> {
    const s = this.sq;
    return s.eventExists.get(eventId) !== undefined && s.fanOutAt.get(eventId) === undefined;
  }

  async claimDue(owner: string, now: Date, leaseUntil: Date, limit: number, skipCustomers?: readonly string[]): Promise<ClaimedWork[]> {
    // IMMEDIATE: better-sqlite3 begins DEFERRED, and a deferred transaction that reads first (the
    // expired leases) and then writes fails at once with SQLITE_BUSY(_SNAPSHOT), without the busy
    // wait, whenever another process (API vs worker) holds the write lock or committed since the
    // read. Taking the lock at BEGIN waits for it (busy timeout) like any single write.
    return this.db.transaction(() => this.claim({ owner, now, leaseUntil, limit }, skipCustomers)).immediate();
  }

  /** Runs inside the caller's transaction. */
  private claim(req: ClaimRequest, skipCustomers?: readonly string[]): ClaimedWork[] {
    const s = this.sq;
    const expired = new Map<string, number>();
    for (const r of s.expiredLeases.all({ now: req.now.getTime(), limit: req.limit }) as { id: string; updated_at: number }[]) expired.set(r.id, Number(r.updated_at));
    // Same transaction as the read of the expired leases: when it found none, neither would the claim.
    const params = { owner: req.owner, leaseUntil: req.leaseUntil.getTime(), now: req.now.getTime(), limit: req.limit };
    const skip = skipCustomers?.length ? JSON.stringify(skipCustomers) : undefined;
    const rows = (
      skip === undefined
        ? (expired.size === 0 ? s.claimPending : s.claim).all(params)
        : (expired.size === 0 ? s.claimPendingSkipping : s.claimSkipping).all({ ...params, skip, window: CLAIM_SKIP_WINDOW })
    ) as ClaimRow[];
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
    // IMMEDIATE: takes the write lock up front (see claimDue).
    return this.db.transaction(() => {
        const held: boolean[] = new Array<boolean>(inputs.length);
        const outcomes: WebhookOutcome[] = [];
        inputs.forEach(({ d, owner, rec, now }, i) => {
          const a = rec.attempt;
          const nowMs = now.getTime();
          const next = rec.nextAttemptAt ? rec.nextAttemptAt.getTime() : null;
          s.insertAttempt.run(attemptUlid(), d.id, a.attemptNo, a.startedAt.getTime(), a.durationMs, a.statusCode, a.outcome, a.errorClass, a.responseExcerpt);
          held[i] = s.complete.run(rec.state, a.attemptNo, next, rec.lastError, a.statusCode, nowMs, rec.state, nowMs, d.id, owner).changes === 1;
          if (held[i]) outcomes.push({ webhookId: d.webhookId, at: a.startedAt, status: rec.webhookStatus, responseCode: a.statusCode, errorClass: a.errorClass });
        });
        // Synchronous on SQLite: part of this transaction, at no extra cost.
        void this.webhookStatus.recordLatest(outcomes);
        return { held, claimed: claim && claim.limit > 0 ? this.claim(claim) : [] };
      }).immediate();
  }

  async renewLeases(owner: string, ids: string[], leaseUntil: Date): Promise<string[]> {
    if (ids.length === 0) return [];
    return this.sq.renew.all({ owner, ids: JSON.stringify(ids), leaseUntil: leaseUntil.getTime() }) as string[];
  }

  async logAttempt(deliveryId: string, a: AttemptRecord['attempt']): Promise<void> {
    this.sq.insertAttempt.run(attemptUlid(), deliveryId, a.attemptNo, a.startedAt.getTime(), a.durationMs, a.statusCode, a.outcome, a.errorClass, a.responseExcerpt);
  }

  async cancelClaimed(d: ClaimedDelivery, owner: string, now: Date, lastError?: string): Promise<void> {
    this.sq.cancel.run(lastError ?? null, now.getTime(), d.id, owner);
  }

  /**
   * Answered by a statement run after this call (once the microtasks queued meanwhile have run,
   * with the other checks pushed in them): a DELETE answered before the call is seen, as the
   * contract requires.
   */
  webhookExists(webhookId: string): Promise<boolean> {
    return this.existence.push(webhookId);
  }

  private existingWebhooks(ids: string[]): boolean[] {
    const found = new Set(this.sq.existing.all(JSON.stringify([...new Set(ids)])) as string[]);
    return ids.map((id) => found.has(id));
  }

  /** One synchronous transaction per batch: nothing else in the process interleaves with it. */
  protected async recoverBatch(scope: RecoverScope, candidates: RecoverCandidate[], now: Date, dryRun: boolean): Promise<number> {
    const sq = this.sq;
    const nowMs = now.getTime();
    const batch = this.db.transaction(() => {
      let n = 0;
      for (const c of candidates) {
        if (dryRun) {
          const state = sq.deliveryState.get(c.id, scope.webhookId) as string | undefined;
          if ((state === undefined && c.insertable) || state === 'failed' || state === 'cancelled') n++;
        } else if (sq.requeueFinished.run(c.dueAt, nowMs, c.id, scope.webhookId).changes > 0) {
          n++;
        } else if (c.insertable) {
          n += sq.insertDelivery.run(c.id, c.eventId, scope.webhookId, scope.customerId, c.dueAt, nowMs, nowMs).changes;
        }
      }
      return n;
    });
    // A write takes the write lock up front, as every write transaction here (see claimDue); a dry run only reads.
    return dryRun ? batch() : batch.immediate();
  }

  /**
   * One prepared statement per subscription (each an index range read at most `limit + 1` rows
   * deep: SQLite has no LATERAL), merged here. Synchronous, on the one connection.
   */
  async eventsPage(subscriptions: readonly EventSubscription[], req: PageRequest, since?: Date): Promise<EventRow[]> {
    const { op, dir, pos } = eventsKeyset(req);
    const stmt = !pos ? this.sq.eventsFirst : op === '<' ? this.sq.eventsAfter : this.sq.eventsBefore;
    const rows: EventRow[] = [];
    for (const s of subscriptions) {
      const params: unknown[] = [s.type, s.subreddit, lowerBound(s.from, since)];
      if (pos) params.push(pos[0], pos[0], pos[0], pos[1]);
      params.push(req.limit + 1);
      for (const r of stmt.all(...params) as Parameters<typeof toEventRow>[0][]) rows.push(toEventRow(r));
    }
    return mergeEventRows(rows, dir, req.limit);
  }
}
