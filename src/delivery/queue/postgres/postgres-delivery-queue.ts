import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { InjectTrendhooksDataSource } from '../../../database/data-source.token';
import type { Pool, PoolConfig, QueryResultRow } from 'pg';
import { DataSource } from 'typeorm';
import type { PageRequest } from '../../../pagination/page';
import { pgPool } from '../../../database/data-source';
import { requireOptional } from '../../../common/optional-package';
import { GroupBatcher } from '../../group-batcher';
import { attemptUlid } from '../attempt-id';
import { ClaimRow, toClaimed } from '../claim-row';
import { eventsKeyset, lowerBound, toEventRow } from '../events-keyset';
import { RecoverCandidate, TypeOrmDeliveryQueue } from '../typeorm-delivery-queue';
import { CLAIM_SKIP_WINDOW, RECORD_BATCH_MAX } from '../types';
import type { AttemptRecord, ClaimedDelivery, ClaimedWork, ClaimRequest, EventRow, EventSubscription, NewEvent, RecordInput, RecordResult, RecoverScope, Subscriber } from '../types';
import { CANCEL } from './sql/cancel';
import { CLAIM, CLAIM_SKIPPING } from './sql/claim';
import { EMIT_TO_ENDPOINTS, EVENT_STORED } from './sql/emit';
import { eventsPageSql } from './sql/events-page';
import { RECOVER, RECOVER_COUNT } from './sql/recover';
import { LOG_ATTEMPT } from './sql/log-attempt';
import { RECORD } from './sql/record';
import { RECORD_AND_CLAIM } from './sql/record-and-claim';
import { RENEW_LEASES } from './sql/renew-leases';
import type { PreparedStatement } from './sql/statement';
import { WEBHOOKS_EXIST } from './sql/webhooks-exist';

// Sessions of the hot-path pool: a claim, a batch of outcomes and an existence check in flight at once.
const HOT_POOL_SIZE = 3;

/**
 * PostgreSQL: claims use `FOR UPDATE SKIP LOCKED`, so many workers share the queue without
 * sending a row twice inside a lease; a claim, and a batch of outcomes with the claim of their
 * replacements, are one statement each. The webhooks' last_* ride on the outcome statement, as
 * the webhooks module's own CTEs (see RECORD_CTES): atomic with the outcomes, no round trip more.
 */
@Injectable()
export class PostgresDeliveryQueue extends TypeOrmDeliveryQueue implements OnApplicationShutdown {
  private hot?: Pool;

  /** Concurrent pre-send existence checks share one query (see webhookExists); a send waits on it. */
  private readonly existence = new GroupBatcher<string, boolean>((ids) => this.existingWebhooks(ids), { maxBatch: 1000 });

  constructor(@InjectTrendhooksDataSource() ds: DataSource) {
    super(ds);
  }

  /**
   * The worker's hot-path statements (claims, outcomes, existence checks): named prepared
   * statements on a small pool of the worker's own, whose sessions always use the generic plan.
   * Planning cost more than running them, and PostgreSQL's own choice kept re-planning the claim
   * on every call (its generic estimate for `LIMIT $n` looks dear). The pool copies the connection
   * settings of TypeORM's; the API's queries are not affected.
   */
  private async prepared<T>(statement: PreparedStatement, values: unknown[]): Promise<T[]> {
    if (!this.hot) {
      const base = pgPool(this.ds).options as PoolConfig;
      const options = [base.options, '-c plan_cache_mode=force_generic_plan'].filter(Boolean).join(' ');
      // Required here, not imported: a SQLite process never loads pg, nor needs it installed (TypeORM's driver has loaded it by now).
      const { Pool: PgPool } = requireOptional<typeof import('pg')>('pg', 'the database is PostgreSQL');
      this.hot = new PgPool({ ...base, max: HOT_POOL_SIZE, options });
      this.hot.on('error', () => undefined); // an idle session dropped: the next query opens another
    }
    return (await this.hot.query<T & QueryResultRow>({ ...statement, values })).rows;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.hot?.end();
    this.hot = undefined;
  }

  /**
   * One statement (one round trip, one synchronous commit): the event, the deliveries, the lease
   * of those the emitting process's worker takes (`lease`) and the NOTIFY (EMIT_TO_ENDPOINTS).
   */
  async insertEventWithDeliveries(
    event: NewEvent,
    targeted: readonly Subscriber[],
    idFor: (webhookId: string) => string,
    now: Date,
    lease?: ClaimRequest,
  ): Promise<{ created: boolean; deliveries: number; claimed?: ClaimedWork[] }> {
    const params: unknown[] = [
      event.id,
      event.type,
      event.subreddit,
      event.payload,
      event.createdAt.getTime(),
      now.getTime(),
      lease?.owner ?? null,
      lease ? lease.leaseUntil.getTime() : null,
      lease ? Math.max(0, lease.limit) : 0,
    ];
    params.push(targeted.map((w) => idFor(w.id)), targeted.map((w) => w.id));
    const { rows } = await pgPool(this.ds).query<ClaimRow & { created: boolean | null; n: number | null }>({ ...EMIT_TO_ENDPOINTS, values: params });
    const summary = rows.find((r) => r.id === null)!;
    const created = summary.created === true;
    const res = { created, deliveries: created ? Number(summary.n) : 0 };
    return lease ? { ...res, claimed: rows.filter((r) => r.id !== null).map(toClaimed) } : res;
  }

  async replayIsComplete(eventId: string): Promise<boolean> {
    return (await pgPool(this.ds).query({ ...EVENT_STORED, values: [eventId] })).rows.length > 0;
  }

  async claimDue(owner: string, now: Date, leaseUntil: Date, limit: number, skipCustomers?: readonly string[]): Promise<ClaimedWork[]> {
    const values = [owner, leaseUntil.getTime(), now.getTime(), limit];
    const rows = skipCustomers?.length
      ? await this.prepared<ClaimRow>(CLAIM_SKIPPING, [...values, skipCustomers, CLAIM_SKIP_WINDOW])
      : await this.prepared<ClaimRow>(CLAIM, values);
    return rows.map(toClaimed);
  }

  async recordAttempts(inputs: RecordInput[], claim?: ClaimRequest): Promise<RecordResult> {
    if (inputs.length > RECORD_BATCH_MAX) throw new Error(`at most ${RECORD_BATCH_MAX} outcomes per batch`);
    const col = <T>(f: (it: RecordInput) => T): T[] => inputs.map(f);
    const params: unknown[] = [
      inputs.map(() => attemptUlid()),
      col((it) => it.d.id),
      col((it) => it.rec.attempt.attemptNo),
      col((it) => it.rec.attempt.startedAt.getTime()),
      col((it) => it.rec.attempt.durationMs),
      col((it) => it.rec.attempt.statusCode),
      col((it) => it.rec.attempt.outcome),
      col((it) => it.rec.attempt.errorClass),
      col((it) => it.rec.attempt.responseExcerpt),
      col((it) => it.rec.state),
      col((it) => (it.rec.nextAttemptAt ? it.rec.nextAttemptAt.getTime() : null)),
      col((it) => it.rec.lastError),
      col((it) => it.now.getTime()),
      col((it) => it.owner),
      col((it) => it.d.webhookId),
      col((it) => it.rec.webhookStatus),
    ];
    const withClaim = claim !== undefined && claim.limit > 0;
    if (withClaim) params.push(claim.owner, claim.leaseUntil.getTime(), claim.now.getTime(), claim.limit);
    // Committed without waiting for the WAL flush (see ASYNC_COMMIT_CTE): an outcome lost in a
    // database crash leaves the delivery leased, so it is sent again, same webhook-id.
    let rows: (ClaimRow & { held?: boolean })[];
    for (let tries = 1; ; tries++) {
      try {
        rows = withClaim
          ? await this.prepared(RECORD_AND_CLAIM, params)
          : (await this.prepared<{ id: string }>(RECORD, params)).map((r) => ({ ...(r as ClaimRow), held: true }));
        break;
      } catch (err) {
        // A deadlock with something else touching these rows (e.g. a taken-over lease): the
        // statement rolled back as a whole, so it is safe to run again.
        if ((err as { code?: string }).code !== '40P01' || tries >= 3) throw err;
      }
    }
    const heldIds = new Set(rows.filter((r) => r.held).map((r) => r.id));
    return { held: inputs.map((it) => heldIds.has(it.d.id)), claimed: rows.filter((r) => !r.held).map(toClaimed) };
  }

  /**
   * On the hot path's own pool, where it waits at most behind a claim or an outcome batch (a few
   * ms), never behind the API's queries on TypeORM's pool: a renewal late by a lease loses the rows.
   */
  async renewLeases(owner: string, ids: string[], leaseUntil: Date): Promise<string[]> {
    if (ids.length === 0) return [];
    return (await this.prepared<{ id: string }>(RENEW_LEASES, [owner, ids, leaseUntil.getTime()])).map((r) => r.id);
  }

  async logAttempt(deliveryId: string, a: AttemptRecord['attempt']): Promise<void> {
    await this.ds.query(LOG_ATTEMPT, [attemptUlid(), deliveryId, a.attemptNo, a.startedAt.getTime(), a.durationMs, a.statusCode, a.outcome, a.errorClass, a.responseExcerpt]);
  }

  async cancelClaimed(d: ClaimedDelivery, owner: string, now: Date, lastError?: string): Promise<void> {
    await this.ds.query(CANCEL, [now.getTime(), d.id, owner, lastError ?? null]);
  }

  /**
   * Concurrent checks are answered by one query; a check arriving while one is in flight waits
   * for the next, so every answer comes from a query that started after its own call.
   */
  webhookExists(webhookId: string): Promise<boolean> {
    return this.existence.push(webhookId);
  }

  private async existingWebhooks(ids: string[]): Promise<boolean[]> {
    const rows = await this.prepared<{ id: string }>(WEBHOOKS_EXIST, [[...new Set(ids)]]);
    const found = new Set(rows.map((r) => r.id));
    return ids.map((id) => found.has(id));
  }

  /** One statement per batch (RECOVER), on the API's pool: synchronous commit, as an outbox write. */
  protected async recoverBatch(scope: RecoverScope, candidates: RecoverCandidate[], now: Date, dryRun: boolean): Promise<number> {
    const ids = candidates.map((c) => c.id);
    const insertable = candidates.map((c) => c.insertable);
    const rows: { queued: number }[] = dryRun
      ? await this.ds.query(RECOVER_COUNT, [ids, insertable, scope.webhookId])
      : await this.ds.query(RECOVER, [ids, candidates.map((c) => c.eventId), insertable, candidates.map((c) => c.dueAt), scope.webhookId, scope.customerId, now.getTime()]);
    return Number(rows[0]?.queued ?? 0);
  }

  async eventsPage(subscriptions: readonly EventSubscription[], req: PageRequest, since?: Date): Promise<EventRow[]> {
    if (subscriptions.length === 0) return [];
    const { op, dir, pos } = eventsKeyset(req);
    const params: unknown[] = [subscriptions.map((s) => s.type), subscriptions.map((s) => s.subreddit), subscriptions.map((s) => lowerBound(s.from, since))];
    let bound = '';
    if (pos) {
      params.push(pos[0], pos[1]);
      // The redundant `created_at op= t` keeps each subscription's read one index range scan.
      bound = `e.created_at ${op}= $4::bigint AND (e.created_at ${op} $4::bigint OR (e.created_at = $4::bigint AND e.id ${op} $5::varchar))`;
    }
    params.push(req.limit + 1);
    const rows: Parameters<typeof toEventRow>[0][] = await this.ds.query(eventsPageSql(bound, dir, `$${params.length}::int`), params);
    return rows.map(toEventRow);
  }
}
