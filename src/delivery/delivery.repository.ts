import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import { Pool } from 'pg';
import type { PoolConfig, QueryResultRow } from 'pg';
import { DataSource, In } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';
import { dialectOf, pgPool, sqliteHandle } from '../database/data-source';
import type { PageRequest } from '../pagination/page';
import { AttemptEntity } from './attempt.entity';
import { DeliveryEntity, DeliveryState } from './delivery.entity';
import { GroupBatcher } from './group-batcher';

/** What the worker needs of a claimed row. */
export interface ClaimedDelivery {
  id: string;
  eventId: string;
  webhookId: string;
  /**
   * Attempts charged so far, this claim's included: the claim itself counts the attempt, so a
   * delivery whose attempts keep killing their worker still runs out of attempts.
   */
  attempts: number;
  /**
   * Set when this claim took the row over from a worker whose lease expired: when that worker
   * claimed it (the start of an attempt whose outcome was never recorded).
   */
  lostSince: Date | null;
}

/** The webhook fields an attempt needs, read with the claim. */
export interface ClaimedWebhook {
  id: string;
  /** The owner: the attempt's DNS lookup counts against this customer's bound. */
  customerId: string;
  url: string;
  allowNonstandardPort: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/**
 * A claimed delivery with its webhook and event, read in the same statement (PostgreSQL) or
 * transaction (SQLite) as the claim. `webhook` is null when it was deleted, `event` when the
 * event row is gone: the worker cancels such a delivery without an attempt.
 */
export interface ClaimedWork extends ClaimedDelivery {
  webhook: ClaimedWebhook | null;
  event: { id: string; type: string; subreddit: string; payload: string; createdAt: Date } | null;
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

// Deliveries per INSERT statement of a fan-out on PostgreSQL (bounds one statement's size).
const INSERT_CHUNK = 5000;
// Per statement of batched writes: PostgreSQL's 65,535 bind parameters are not the limit (arrays
// are one parameter each); this just bounds one transaction's size.
const RECORD_BATCH_MAX = 256;
// Sessions of the hot-path pool: a claim, a batch of outcomes and an existence check in flight at once.
const HOT_POOL_SIZE = 3;
export const DELIVERY_NOTIFY_CHANNEL = 'trendhooks_deliveries';

/**
 * PostgreSQL: the worker's hot-path statements (claims, attempt outcomes) commit without waiting
 * for their WAL flush (`synchronous_commit = off` for that transaction only; a CTE joined into the
 * statement sets it). Waiting for the flush was most of each round trip. It is safe because what
 * such a commit can lose in a database crash (the last ~0.5 s) only ever makes a delivery due
 * again, to be sent once more with the same webhook-id: the at-least-once contract. Writing an
 * event and its deliveries (the outbox) still waits for the flush.
 */
const ASYNC_COMMIT_CTE = `async_commit AS (SELECT set_config('synchronous_commit', 'off', true))`;

/**
 * PostgreSQL claim, as CTEs: lease up to `limit` due rows by two ordered index range scans
 * (pending; delivering with an expired lease — FOR UPDATE cannot sit in a UNION, hence two), then
 * the final SELECT joins each leased row's webhook and event. `$owner` … are placeholders filled
 * with the statement's parameter numbers; `exclude` keeps rows out (those whose outcome the same
 * statement writes: one statement must not update a row twice).
 */
function pgClaimCtes(p: { owner: string; leaseUntil: string; now: string; limit: string; exclude?: string }): string {
  return `pending AS (
      SELECT id, next_attempt_at, NULL::bigint AS lost_since FROM deliveries WHERE state = 'pending' AND next_attempt_at <= ${p.now}
      ORDER BY next_attempt_at LIMIT ${p.limit} FOR UPDATE SKIP LOCKED),
    expired AS (
      SELECT id, next_attempt_at, updated_at AS lost_since FROM deliveries WHERE state = 'delivering' AND next_attempt_at <= ${p.now}${p.exclude ? ` AND NOT (id = ANY(${p.exclude}))` : ''}
      ORDER BY next_attempt_at LIMIT ${p.limit} FOR UPDATE SKIP LOCKED),
    pick AS (SELECT id, lost_since FROM (SELECT * FROM pending UNION ALL SELECT * FROM expired) due, async_commit ORDER BY next_attempt_at LIMIT ${p.limit}),
    claimed AS (
      UPDATE deliveries d SET state = 'delivering', attempts = d.attempts + 1, lease_owner = ${p.owner}, next_attempt_at = ${p.leaseUntil}, updated_at = ${p.now}
      FROM pick WHERE d.id = pick.id
      RETURNING d.id, d.event_id, d.webhook_id, d.attempts, pick.lost_since)`;
}

const PG_CLAIMED_COLUMNS = `c.id, c.event_id, c.webhook_id, c.attempts, c.lost_since,
    w.url, w.customer_id, w.allow_nonstandard_port, w.secret, w.previous_secret, w.previous_secret_expires_at,
    e.type AS event_type, e.subreddit AS event_subreddit, e.payload AS event_payload, e.created_at AS event_created_at
  FROM claimed c LEFT JOIN webhooks w ON w.id = c.webhook_id LEFT JOIN events e ON e.id = c.event_id`;

/**
 * PostgreSQL outcomes of a batch, as CTEs over 16 parallel arrays ($1…$16): the attempt rows, the
 * state changes fenced on the lease (`held`), and each webhook's last_* from its latest held
 * attempt. Webhook rows are locked in id order, so two workers' batches cannot deadlock on them.
 */
const PG_RECORD_CTES = `src AS (
      SELECT s.* FROM async_commit, unnest($1::varchar[], $2::varchar[], $3::int[], $4::bigint[], $5::int[], $6::int[], $7::varchar[], $8::varchar[], $9::text[],
                                         $10::varchar[], $11::bigint[], $12::varchar[], $13::bigint[], $14::varchar[], $15::varchar[], $16::varchar[])
        AS s(attempt_id, delivery_id, attempt_no, started_at, duration_ms, status_code, outcome, error_class, response_excerpt,
             state, next_attempt_at, last_error, now, owner, webhook_id, webhook_status)),
    attempts AS (
      INSERT INTO delivery_attempts (id, delivery_id, attempt_no, started_at, duration_ms, status_code, outcome, error_class, response_excerpt)
      SELECT attempt_id, delivery_id, attempt_no, started_at, duration_ms, status_code, outcome, error_class, response_excerpt FROM src),
    held AS (
      UPDATE deliveries d SET state = s.state, attempts = s.attempt_no, next_attempt_at = s.next_attempt_at, lease_owner = NULL,
        last_error = s.last_error, last_response_code = s.status_code, updated_at = s.now,
        delivered_at = CASE WHEN s.state = 'delivered' THEN s.now ELSE d.delivered_at END
      FROM src s WHERE d.id = s.delivery_id AND d.lease_owner = s.owner AND d.state = 'delivering'
      RETURNING d.id),
    latest AS (
      SELECT DISTINCT ON (s.webhook_id) s.webhook_id, s.started_at, s.webhook_status, s.status_code
      FROM src s JOIN held h ON h.id = s.delivery_id ORDER BY s.webhook_id, s.started_at DESC),
    locked AS (SELECT w.id FROM webhooks w WHERE w.id IN (SELECT webhook_id FROM latest) ORDER BY w.id FOR UPDATE),
    touched AS (
      UPDATE webhooks w SET last_delivery_at = l.started_at, last_status = l.webhook_status, last_response_code = l.status_code
      FROM latest l JOIN locked k ON k.id = l.webhook_id
      WHERE w.id = l.webhook_id AND (w.last_delivery_at IS NULL OR w.last_delivery_at <= l.started_at))`;

const PG_CLAIM_SQL = `WITH ${ASYNC_COMMIT_CTE}, ${pgClaimCtes({ owner: '$1', leaseUntil: '$2', now: '$3', limit: '$4' })}
  SELECT ${PG_CLAIMED_COLUMNS}`;

const PG_RECORD_SQL = `WITH ${ASYNC_COMMIT_CTE}, ${PG_RECORD_CTES}
  SELECT id FROM held`;

// The outcomes and the claim of their replacements in one round trip: rows with `held` set are
// outcomes whose lease still held; the others are newly leased deliveries.
const PG_RECORD_AND_CLAIM_SQL = `WITH ${ASYNC_COMMIT_CTE}, ${PG_RECORD_CTES},
    ${pgClaimCtes({ owner: '$17', leaseUntil: '$18', now: '$19', limit: '$20', exclude: '$2::varchar[]' })}
  SELECT true AS held, h.id, NULL AS event_id, NULL AS webhook_id, NULL AS attempts, NULL AS lost_since, NULL AS url, NULL AS customer_id, NULL AS allow_nonstandard_port, NULL AS secret,
         NULL AS previous_secret, NULL AS previous_secret_expires_at, NULL AS event_type, NULL AS event_subreddit, NULL AS event_payload, NULL AS event_created_at
  FROM held h
  UNION ALL
  SELECT false, ${PG_CLAIMED_COLUMNS}`;

// Attempt ids: ULIDs like everywhere else, but ulid's default PRNG asks the OS for one byte per
// character (16 syscalls per id); a pooled buffer does the same from one fill per 4 KiB.
const randomPool = Buffer.alloc(4096);
let randomAt = randomPool.length;
const attemptUlid = monotonicFactory(() => {
  if (randomAt >= randomPool.length) {
    randomFillSync(randomPool);
    randomAt = 0;
  }
  return randomPool[randomAt++] / 256;
});

type ClaimRow = {
  id: string;
  event_id: string;
  webhook_id: string;
  attempts: number | string;
  lost_since?: number | string | null;
  url: string | null;
  customer_id: string | null;
  allow_nonstandard_port: boolean | number | null;
  secret: string | null;
  previous_secret: string | null;
  previous_secret_expires_at: number | string | null;
  event_type: string | null;
  event_subreddit: string | null;
  event_payload: string | null;
  event_created_at: number | string | null;
};

/** One attempt's outcome, for recordAttempts. */
export interface RecordInput {
  d: ClaimedDelivery;
  owner: string;
  rec: AttemptRecord;
  now: Date;
}

/** A claim of up to `limit` due deliveries, leased to `owner` until `leaseUntil`. */
export interface ClaimRequest {
  owner: string;
  now: Date;
  leaseUntil: Date;
  limit: number;
}

/**
 * The delivery queue lives in SQL (graphile-worker style). On PostgreSQL claims use
 * `FOR UPDATE SKIP LOCKED`, so many workers share the queue without sending a row twice inside a
 * lease. On SQLite every multi-statement write runs as one synchronous better-sqlite3
 * transaction: nothing else in the process can interleave with it (TypeORM shares a single
 * connection there, so an async transaction would swallow other requests' statements).
 */
@Injectable()
export class DeliveryRepository implements OnApplicationShutdown {
  private readonly pg: boolean;
  private hot?: Pool;
  private stmts?: ReturnType<DeliveryRepository['prepareSqlite']>;

  /** PostgreSQL: concurrent pre-send existence checks share one query (see webhookExists); a send waits on it. */
  private readonly existence = new GroupBatcher<string, boolean>((ids) => this.existingWebhooks(ids), { maxBatch: 1000 });

  constructor(@InjectDataSource() private readonly ds: DataSource) {
    this.pg = dialectOf(ds) === 'postgres';
  }

  private get sqlite(): SqliteDatabase {
    return sqliteHandle(this.ds);
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
      // Two ordered index range scans (pending; delivering with an expired lease), each stopping
      // after `limit` rows: `state IN (…) ORDER BY` would sort every due row on every claim.
      // The rows among them whose lease expired (read first: RETURNING sees only new values).
      expiredLeases: db.prepare(
        `SELECT id, updated_at FROM deliveries WHERE state = 'delivering' AND next_attempt_at <= @now ORDER BY next_attempt_at LIMIT @limit`,
      ),
      claim: db.prepare(
        `UPDATE deliveries SET state = 'delivering', attempts = attempts + 1, lease_owner = @owner, next_attempt_at = @leaseUntil, updated_at = @now
         WHERE id IN (
           SELECT id FROM (
             SELECT * FROM (SELECT id, next_attempt_at FROM deliveries WHERE state = 'pending' AND next_attempt_at <= @now ORDER BY next_attempt_at LIMIT @limit)
             UNION ALL
             SELECT * FROM (SELECT id, next_attempt_at FROM deliveries WHERE state = 'delivering' AND next_attempt_at <= @now ORDER BY next_attempt_at LIMIT @limit)
           ) ORDER BY next_attempt_at LIMIT @limit)
         RETURNING id, event_id, webhook_id, attempts`,
      ),
      // One statement for all of a claim's webhooks (a JSON array of ids): fewer calls than one each.
      webhooks: db.prepare(
        'SELECT id, url, customer_id, allow_nonstandard_port, secret, previous_secret, previous_secret_expires_at FROM webhooks WHERE id IN (SELECT value FROM json_each(?))',
      ),
      event: db.prepare('SELECT type AS event_type, subreddit AS event_subreddit, payload AS event_payload, created_at AS event_created_at FROM events WHERE id = ?'),
      exists: db.prepare('SELECT 1 FROM webhooks WHERE id = ?').pluck(),
      complete: db.prepare(
        `UPDATE deliveries SET state = ?, attempts = ?, next_attempt_at = ?, lease_owner = NULL, last_error = ?,
           last_response_code = ?, updated_at = ?, delivered_at = CASE WHEN ? = 'delivered' THEN ? ELSE delivered_at END
         WHERE id = ? AND lease_owner = ? AND state = 'delivering'`,
      ),
      insertAttempt: db.prepare(
        `INSERT INTO delivery_attempts (id, delivery_id, attempt_no, started_at, duration_ms, status_code, outcome, error_class, response_excerpt)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      // Only forward: an attempt that started earlier but finished later (a hang) must not hide a newer one.
      touchWebhook: db.prepare(
        'UPDATE webhooks SET last_delivery_at = @at, last_status = @status, last_response_code = @code WHERE id = @id AND (last_delivery_at IS NULL OR last_delivery_at <= @at)',
      ),
      // The claim's charge is given back: no attempt was made.
      cancel: db.prepare(`UPDATE deliveries SET state = 'cancelled', attempts = attempts - 1, next_attempt_at = NULL, lease_owner = NULL, updated_at = ? WHERE id = ? AND lease_owner = ?`),
    };
  }

  /**
   * The worker's hot-path statements on PostgreSQL (claims, outcomes, existence checks): named
   * prepared statements on a small pool of the worker's own, whose sessions always use the
   * generic plan. Planning cost more than running them, and PostgreSQL's own choice kept
   * re-planning the claim on every call (its generic estimate for `LIMIT $n` looks dear). The
   * pool copies the connection settings of TypeORM's; the API's queries are not affected.
   */
  private async pgPrepared<T>(name: string, text: string, values: unknown[]): Promise<T[]> {
    if (!this.hot) {
      const base = pgPool(this.ds).options as PoolConfig;
      const options = [base.options, '-c plan_cache_mode=force_generic_plan'].filter(Boolean).join(' ');
      this.hot = new Pool({ ...base, max: HOT_POOL_SIZE, options });
      this.hot.on('error', () => undefined); // an idle session dropped: the next query opens another
    }
    return (await this.hot.query<T & QueryResultRow>({ name, text, values })).rows;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.hot?.end();
    this.hot = undefined;
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
      // Each chunk is one statement whatever its size (three array parameters, not 4 per row):
      // parsing and planning a 2,000-parameter VALUES list cost more than inserting its rows.
      // The NOTIFY rides on the last statement; LISTENing workers get it when this commits.
      let n = 0;
      for (let i = 0; i < subs.length; i += INSERT_CHUNK) {
        const chunk = subs.slice(i, i + INSERT_CHUNK);
        const last = i + INSERT_CHUNK >= subs.length;
        const [row] = (await em.query(
          `WITH ins AS (
             INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, next_attempt_at, created_at, updated_at)
             SELECT t.id, $2::varchar, t.webhook_id, t.customer_id, 'pending', 0, $3::bigint, $3::bigint, $3::bigint
             FROM unnest($1::varchar[], $4::varchar[], $5::varchar[]) AS t(id, webhook_id, customer_id)
             ON CONFLICT DO NOTHING RETURNING 1),
           counted AS (SELECT count(*)::int AS n FROM ins)
           SELECT n, CASE WHEN $6::boolean AND n + $7::int > 0 THEN pg_notify('${DELIVERY_NOTIFY_CHANNEL}', '') END AS notified FROM counted`,
          [chunk.map((w) => idFor(w.id)), event.id, nowMs, chunk.map((w) => w.id), chunk.map((w) => w.customerId), last, n],
        )) as { n: number }[];
        n += row.n;
      }
      return { created: true, deliveries: n };
    });
  }

  /**
   * Leases up to `limit` due deliveries to `owner` until `leaseUntil`, with what sending them
   * needs. A row whose lease expired (its worker died) is due again by construction:
   * next_attempt_at holds the lease expiry.
   */
  async claimDue(owner: string, now: Date, leaseUntil: Date, limit: number): Promise<ClaimedWork[]> {
    const req: ClaimRequest = { owner, now, leaseUntil, limit };
    if (!this.pg) return this.sqlite.transaction(() => this.claimSqlite(req))();
    // One round trip: the lease and what sending needs. Committed without waiting for the WAL
    // flush (see ASYNC_COMMIT_CTE).
    const rows = await this.pgPrepared<ClaimRow>('trendhooks_claim', PG_CLAIM_SQL, [owner, leaseUntil.getTime(), now.getTime(), limit]);
    return rows.map(toClaimed);
  }

  /** SQLite claim; runs inside the caller's transaction. */
  private claimSqlite(req: ClaimRequest): ClaimedWork[] {
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

  /**
   * Records a batch of attempts (one transaction on SQLite, one statement on PostgreSQL) and moves
   * each delivery on, fenced on the lease: when another worker took the row over (this one stalled
   * past its lease), the attempt is still logged but the state is left to the new owner. And,
   * when `claim` is given, a claim of further deliveries in the same transaction: the worker
   * refills the slots these outcomes free without another round trip. `held[i]` is about
   * `inputs[i]`. At most RECORD_BATCH_MAX inputs.
   */
  async recordAttempts(inputs: RecordInput[], claim?: ClaimRequest): Promise<{ held: boolean[]; claimed: ClaimedWork[] }> {
    if (inputs.length > RECORD_BATCH_MAX) throw new Error(`at most ${RECORD_BATCH_MAX} outcomes per batch`);
    const ids = inputs.map(() => attemptUlid());
    if (!this.pg) {
      const s = this.sq;
      // The webhook's last_* columns end up with the batch's latest attempt, as if written one by one.
      const order = inputs.map((_, i) => i).sort((a, b) => inputs[a].rec.attempt.startedAt.getTime() - inputs[b].rec.attempt.startedAt.getTime());
      return this.sqlite.transaction(() => {
        const held: boolean[] = new Array<boolean>(inputs.length);
        for (const i of order) {
          const { d, owner, rec, now } = inputs[i];
          const a = rec.attempt;
          const nowMs = now.getTime();
          const next = rec.nextAttemptAt ? rec.nextAttemptAt.getTime() : null;
          s.insertAttempt.run(ids[i], d.id, a.attemptNo, a.startedAt.getTime(), a.durationMs, a.statusCode, a.outcome, a.errorClass, a.responseExcerpt);
          held[i] = s.complete.run(rec.state, a.attemptNo, next, rec.lastError, a.statusCode, nowMs, rec.state, nowMs, d.id, owner).changes === 1;
          if (held[i]) s.touchWebhook.run({ at: a.startedAt.getTime(), status: rec.webhookStatus, code: a.statusCode, id: d.webhookId });
        }
        return { held, claimed: claim && claim.limit > 0 ? this.claimSqlite(claim) : [] };
      })();
    }
    const col = <T>(f: (it: RecordInput) => T): T[] => inputs.map(f);
    const params: unknown[] = [
      ids,
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
          ? await this.pgPrepared('trendhooks_record_and_claim', PG_RECORD_AND_CLAIM_SQL, params)
          : (await this.pgPrepared<{ id: string }>('trendhooks_record_attempts', PG_RECORD_SQL, params)).map((r) => ({ ...(r as ClaimRow), held: true }));
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

  /** Logs one attempt row without touching the delivery (an attempt lost with its worker). */
  async logAttempt(deliveryId: string, a: AttemptRecord['attempt']): Promise<void> {
    const row = [attemptUlid(), deliveryId, a.attemptNo, a.startedAt.getTime(), a.durationMs, a.statusCode, a.outcome, a.errorClass, a.responseExcerpt];
    if (!this.pg) {
      this.sq.insertAttempt.run(...row);
      return;
    }
    await this.ds.query(
      `INSERT INTO delivery_attempts (id, delivery_id, attempt_no, started_at, duration_ms, status_code, outcome, error_class, response_excerpt)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      row,
    );
  }

  /** The claimed delivery's webhook is gone: stop it without an attempt. */
  async cancelClaimed(d: ClaimedDelivery, owner: string, now: Date): Promise<void> {
    if (!this.pg) {
      this.sq.cancel.run(now.getTime(), d.id, owner);
      return;
    }
    await this.ds.query(`UPDATE deliveries SET state = 'cancelled', attempts = attempts - 1, next_attempt_at = NULL, lease_owner = NULL, updated_at = $1 WHERE id = $2 AND lease_owner = $3`, [
      now.getTime(),
      d.id,
      owner,
    ]);
  }

  /**
   * Gives up the leases of a stopping worker so others pick its rows up at once. `unstarted`
   * rows (claimed, never sent) go back to pending with the claim's charge given back. Rows whose
   * attempt is still `in_flight` stay charged and leased, the lease ending now: the next claim
   * takes them over as an attempt whose outcome was lost (see the worker), as if this worker had died.
   */
  async releaseLeases(owner: string, ids: string[], now: Date, what: 'unstarted' | 'in_flight'): Promise<void> {
    if (ids.length === 0) return;
    const set: QueryDeepPartialEntity<DeliveryEntity> =
      what === 'unstarted' ? { state: 'pending', attempts: () => 'attempts - 1', leaseOwner: null, nextAttemptAt: now, updatedAt: now } : { nextAttemptAt: now };
    await this.ds
      .createQueryBuilder()
      .update(DeliveryEntity)
      .set(set)
      .where('lease_owner = :owner AND state = :state AND id IN (:...ids)', { owner, state: 'delivering', ids })
      .execute();
  }

  /**
   * Whether the webhook still exists, asked right before a send: a DELETE that returned 204
   * before this call is seen, so no attempt starts after it. On PostgreSQL concurrent checks are
   * answered by one query; a check arriving while one is in flight waits for the next, so every
   * answer comes from a query that started after its own call.
   */
  webhookExists(webhookId: string): Promise<boolean> {
    if (!this.pg) return Promise.resolve(this.sq.exists.get(webhookId) !== undefined);
    return this.existence.push(webhookId);
  }

  private async existingWebhooks(ids: string[]): Promise<boolean[]> {
    const rows = await this.pgPrepared<{ id: string }>('trendhooks_webhooks_exist', 'SELECT id FROM webhooks WHERE id = ANY($1::varchar[])', [[...new Set(ids)]]);
    const found = new Set(rows.map((r) => r.id));
    return ids.map((id) => found.has(id));
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

const num = (v: number | string | null): number | null => (v == null ? null : Number(v));

function toClaimed(r: ClaimRow): ClaimedWork {
  const lost = num(r.lost_since ?? null);
  return {
    id: r.id,
    eventId: r.event_id,
    webhookId: r.webhook_id,
    attempts: Number(r.attempts),
    lostSince: lost === null ? null : new Date(lost),
    webhook: toWebhook(r.webhook_id, r),
    event: toEvent(r.event_id, r),
  };
}

/** null: the webhook is gone (a LEFT JOIN that found nothing, or no row on SQLite). */
function toWebhook(id: string, r: Partial<ClaimRow> | undefined): ClaimedWebhook | null {
  if (r?.url == null || r.secret == null) return null;
  const expires = num(r.previous_secret_expires_at ?? null);
  return {
    id,
    url: r.url,
    customerId: r.customer_id ?? '',
    allowNonstandardPort: r.allow_nonstandard_port === true || r.allow_nonstandard_port === 1,
    secret: r.secret,
    previousSecret: r.previous_secret ?? null,
    previousSecretExpiresAt: expires == null ? null : new Date(expires),
  };
}

function toEvent(id: string, r: Partial<ClaimRow> | undefined): ClaimedWork['event'] {
  const createdAt = num(r?.event_created_at ?? null);
  if (r?.event_type == null || r.event_payload == null || createdAt == null) return null;
  return { id, type: r.event_type, subreddit: r.event_subreddit ?? '', payload: r.event_payload, createdAt: new Date(createdAt) };
}
