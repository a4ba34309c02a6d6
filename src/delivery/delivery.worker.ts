import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { LRUCache } from 'lru-cache';
import { CLOCK, Clock } from '../common/clock';
import { SecretBox } from '../crypto/secret-box';
import { Metrics } from '../metrics/metrics.service';
import { SecretDecryptionError } from '../crypto/key-ring';
import { EndpointEntity, webhookSecretPlace } from './endpoint.entity';
import { decideNext } from './classify';
import { DELIVERY_OPTIONS, DeliveryModuleOptions, resolveDeliveryOptions, ResolvedDeliveryOptions } from './delivery.options';
import { GroupBatcher } from './group-batcher';
import { deliveryBodyTemplate } from './payload';
import { DeliveryQueue } from './queue/delivery-queue';
import { QueueWaker } from './queue/queue-waker';
import { ACTIVITY_WINDOW } from './queue/types';
import type { AttemptRecord, ClaimedWork, ClaimRequest, RecordInput } from './queue/types';
import { DEFAULT_RETRY_SCHEDULE_S, RetryPolicy } from './retry-policy';
import { DeliveryTransport, SendFailure, SendOutcome } from './transport/delivery-transport';
import { DestinationCircuitBreaker, ParkedDelivery } from './circuit/destination-circuit-breaker';
import { destinationOf } from './destination';
import { DESTINATION_BUSY_DEFER_MS, WorkerSlots } from './slots/worker-slots';
import { countsAsFailure } from './lifecycle/disable-rule';
import { WEBHOOK_DISABLED, WebhookLifecycle } from './lifecycle/webhook-lifecycle';

export { destinationOf };

const POLL_INTERVAL_NAME = 'trendhooks-delivery-poll';
/** `error_class` of an attempt whose worker died (or stopped) before recording its outcome. */
export const WORKER_LOST = 'worker_lost';
/**
 * `error_class` of an attempt whose webhook's stored signing secret does not decrypt (a damaged or
 * altered row): permanent, since no retry can sign; the customer's rotation gives it a new secret.
 */
export const SECRET_UNREADABLE = 'secret_unreadable';

// Longest a busy worker waits for enough free slots before claiming for fewer (see minClaim).
const LOW_WATER_WAIT_MS = 5;
// Longest the first outcomes to end wait for others still sending to join their batch (see gatherOutcomes).
const GATHER_OUTCOMES_MS = 2;
// How often a sending worker reads the queue's activity for the fair share (see refreshActivity).
const ACTIVITY_REFRESH_MS = 250;
// Events whose body templates are kept between claims (see bodyTemplates). A template holds the
// body's text, up to the 64 KiB an emit's request may carry: 32 of them stay under 2 MiB, and a
// fan-out (many claims of one event) or events emitted one after another need only the last few.
const BODY_TEMPLATES_MAX = 32;

/** An event's body template, and the stored row it was built from. */
interface BodyTemplate {
  payload: string;
  type: string;
  subreddit: string;
  createdAtMs: number;
  bodyFor: (webhookId: string) => string;
}

/**
 * Sends due deliveries. Woken at once by the QueueWaker (an event fanned out in this process, or
 * wherever the database carries wake-ups), and by a @nestjs/schedule interval as the fallback
 * that also picks up retries coming due and leases of workers that died.
 */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('DeliveryWorker');
  /** Lease owner: unique per process start, so a restarted worker never mistakes old leases for its own. */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly opts: ResolvedDeliveryOptions;
  private readonly policy: RetryPolicy;
  /**
   * Claimed deliveries until their outcome is committed (at most `concurrency`): a worker that
   * dies leaves no more than that many rows to be sent a second time.
   */
  private readonly inflight = new Map<string, Promise<void>>();
  /**
   * The slots (`concurrency`, reservations of claims in flight) and each customer's and
   * destination's share of them (slots/worker-slots.ts): together the claims never lease more
   * than `concurrency`, nor anyone past their share.
   */
  private readonly slots: WorkerSlots;
  /** Attempts whose outcome write already claimed for their slot and found the queue empty (no wake when they end). */
  private readonly refilled = new Set<string>();
  /**
   * Outcomes of attempts that finish together are written together, and the same transaction
   * (one statement on PostgreSQL) leases deliveries for the slots they free: no claim round trip
   * between one send and the next.
   */
  private readonly outcomes = new GroupBatcher<RecordInput, boolean>((batch) => this.writeOutcomes(batch), {
    gather: { enough: () => Math.min(this.gatherOutcomes, this.inflight.size), maxWaitMs: GATHER_OUTCOMES_MS },
  });
  /**
   * An outcome batch smaller than this (half the concurrency), while other attempts are still
   * sending, waits up to GATHER_OUTCOMES_MS for them: a batch's transaction and the claim riding
   * on it cost about the same for 10 outcomes as for 30 (SQLite: the COMMIT writes the pages
   * the batch touched, and rows claimed together share pages), so a busy worker pays them for
   * fewer, bigger batches, while a slot waits at most that long for its outcome to commit. An
   * attempt that ends alone (nothing else in flight) is written at once.
   */
  private readonly gatherOutcomes: number;
  private running = false;
  private draining = false;
  private again = false;
  private wakeQueued = false;
  /**
   * While sends are in flight, a claim waits until this many slots are free (or LOW_WATER_WAIT_MS
   * passed): refilling one or two slots per claim made the claim round trips, not the sends, the
   * limit on PostgreSQL. An idle worker claims at once.
   */
  private readonly minClaim: number;
  private lowWaterTimer?: NodeJS.Timeout;
  private claimAnySize = false;
  /** Settles when the current claim loop ends: a claim answered during shutdown still adds its attempts to `inflight`. */
  private drainDone?: Promise<void>;
  /** The heartbeat: renews the leases of `inflight` every `leaseRenewMs` (see renewLeases). */
  private renewTimer?: NodeJS.Timeout;
  /** The renewal in flight, if any: never two at once, and shutdown waits for it before giving leases back. */
  private renewing?: Promise<void>;
  private renewFailing = false;
  /**
   * Body templates of the events sent lately, by event id. A fan-out reaches the worker as many
   * claims of a few dozen rows each: built once per claim, the template (the payload parsed, the
   * body serialised around a marker) cost about 50 µs a claim, 1.5 µs a delivery. Checked once
   * per event and claim (not per delivery), and only used for the same stored row.
   */
  private readonly bodyTemplates = new LRUCache<string, BodyTemplate>({ max: BODY_TEMPLATES_MAX });
  /**
   * Wake-ups from the queue and polls so far (`newWork`), and the count as it was when a claim
   * passing over the customers at their share last found nothing more (`skipFoundNone`): such a
   * claim reads past those customers' backlog (up to CLAIM_SKIP_WINDOW rows), so it runs again
   * only after new work may have arrived, not each time one of their attempts ends. A count, not
   * a flag: a wake-up that arrives while such a claim is in flight is not lost when it answers.
   */
  private newWork = 0;
  /** `newWork` and the customers passed over, as they were when such a claim last found nothing more. */
  private skipFoundNone = '';
  /** The read of the whole queue's activity for the fair share (see refreshActivity), every ACTIVITY_REFRESH_MS. */
  private activityTimer?: NodeJS.Timeout;
  private refreshing = false;
  /** Deliveries a circuit puts off, given back together (uncharged, pending until their circuit's time). */
  private readonly deferrals = new GroupBatcher<{ id: string; until: Date }, void>((items) => this.releaseDeferred(items));

  constructor(
    private readonly repo: DeliveryQueue,
    private readonly transport: DeliveryTransport,
    private readonly waker: QueueWaker,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(DELIVERY_OPTIONS) options: DeliveryModuleOptions,
    private readonly secretBox: SecretBox,
    private readonly circuits: DestinationCircuitBreaker,
    @Optional() private readonly scheduler?: SchedulerRegistry,
    @Optional() private readonly metrics?: Metrics,
    // Absent only where a test builds the worker by hand: no auto-disable then.
    @Optional() private readonly lifecycle?: WebhookLifecycle,
  ) {
    this.opts = resolveDeliveryOptions(options);
    this.minClaim = Math.max(1, Math.min(this.opts.batchSize, Math.floor(this.opts.concurrency / 4)));
    this.gatherOutcomes = Math.max(1, Math.floor(this.opts.concurrency / 2));
    this.slots = new WorkerSlots(this.opts, clock);
    this.policy = new RetryPolicy({ scheduleSeconds: options.retryScheduleSeconds ?? DEFAULT_RETRY_SCHEDULE_S, random: options.random });
    this.circuits.onProbeAnswered((parked) => void this.bringForward(parked));
  }

  get enabled(): boolean {
    return this.opts.worker;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.opts.worker) return;
    this.running = true;
    // Not unref'd: in a worker-only process on SQLite this timer is what keeps the process alive.
    const timer = setInterval(() => this.wakeForNewWork(), this.opts.pollIntervalMs);
    if (this.scheduler) this.scheduler.addInterval(POLL_INTERVAL_NAME, timer);
    else this.pollTimer = timer;
    this.renewTimer = setInterval(() => this.renewLeases(), this.opts.leaseRenewMs);
    this.renewTimer.unref();
    this.activityTimer = setInterval(() => {
      this.claimOverflow();
      void this.refreshActivity();
    }, ACTIVITY_REFRESH_MS);
    this.activityTimer.unref();
    this.waker.onWake(() => this.wakeForNewWork());
    await this.waker.start();
    this.wake();
  }

  /**
   * The heartbeat. Leases are short (`leaseMs`, 3 s by default) so that a worker's death is seen
   * within seconds; a live worker keeps what it holds (sending, or its outcome being written) by
   * renewing all of it in one statement every `leaseRenewMs`, for as long as each attempt takes
   * (the attempt timeout is independent of the lease). A worker that stalls past its lease (a
   * blocked event loop, a database it cannot reach) loses its rows to whoever claims them; its
   * renewal then finds them under another owner and leaves them alone, and its late outcome is
   * fenced the same way: logged as an attempt, the state left to the new owner.
   */
  private renewLeases(): void {
    if (this.renewing || this.inflight.size === 0) return;
    const ids = [...this.inflight.keys()];
    const leaseUntil = new Date(this.clock.now().getTime() + this.opts.leaseMs);
    this.renewing = this.repo
      .renewLeases(this.owner, ids, leaseUntil)
      .then(
        () => {
          if (this.renewFailing) this.logger.log('renewing delivery leases works again');
          this.renewFailing = false;
        },
        (err) => {
          // Once per failing spell: the next tick tries again; past the lease, other workers take the rows.
          if (!this.renewFailing) this.logger.warn(`renewing ${ids.length} delivery leases failed: ${(err as Error).message}`);
          this.renewFailing = true;
        },
      )
      .finally(() => (this.renewing = undefined));
  }

  private pollTimer?: NodeJS.Timeout;
  /** What `slots.overflow()` was at the last tick (see claimOverflow). */
  private overflowSeen = 0;

  /**
   * Borrowed attempts that got stuck since the last tick gave their slots back (WorkerSlots
   * `overflow`): a claim for them, since no attempt's end wakes one.
   */
  private claimOverflow(): void {
    const overflow = this.slots.overflow();
    if (overflow > this.overflowSeen) this.wake();
    this.overflowSeen = overflow;
  }

  /**
   * Reads who uses the queue as a whole (DeliveryQueue.activity: customers with due deliveries,
   * live leases per customer on every worker) for the fair share (WorkerSlots). Only while this
   * worker sends: an idle worker holds nothing to share, and forgets what it read.
   */
  private async refreshActivity(): Promise<void> {
    if (this.refreshing) return;
    if (this.inflight.size === 0) {
      this.slots.setActivity({ customers: new Set(), elsewhere: new Map(), workers: 1 });
      return;
    }
    this.refreshing = true;
    try {
      const rows = await this.repo.activity(this.clock.now(), ACTIVITY_WINDOW);
      const customers = new Set(rows.dueCustomers);
      const elsewhere = new Map<string, number>();
      const owners = new Set([this.owner]);
      for (const r of rows.leased) {
        customers.add(r.customer);
        owners.add(r.owner);
        if (r.owner !== this.owner) elsewhere.set(r.customer, (elsewhere.get(r.customer) ?? 0) + r.n);
      }
      this.slots.setActivity({ customers, elsewhere, workers: owners.size });
    } catch (err) {
      // The last read stays; the next tick tries again.
      this.logger.debug?.(`reading the queue's activity failed: ${(err as Error).message}`);
    } finally {
      this.refreshing = false;
    }
  }

  /** A wake-up from the queue or the poll: rows of customers other than those at their share may be due. */
  private wakeForNewWork(): void {
    this.newWork++;
    this.wake();
  }

  /**
   * Start claiming (cheap when already running: the current drain loops once more). Deferred by
   * one setImmediate, so the attempts that finish in the same event-loop turn free their slots
   * first and are refilled by one claim rather than one claim each.
   */
  wake(): void {
    if (!this.running) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    if (this.wakeQueued) return;
    this.wakeQueued = true;
    setImmediate(() => {
      this.wakeQueued = false;
      if (!this.running) return;
      if (this.draining) this.again = true;
      else void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    let drained!: () => void;
    this.drainDone = new Promise((r) => (drained = r));
    try {
      do {
        this.again = false;
        while (this.running && this.free > 0) {
          const room = Math.min(this.opts.batchSize, this.free);
          if (room < this.minClaim && this.inflight.size > 0 && !this.claimAnySize) {
            this.lowWaterTimer ??= setTimeout(() => {
              this.lowWaterTimer = undefined;
              this.claimAnySize = true;
              this.wake();
            }, LOW_WATER_WAIT_MS);
            break;
          }
          this.claimAnySize = false;
          clearTimeout(this.lowWaterTimer);
          this.lowWaterTimer = undefined;
          // Fairness (see WorkerSlots): claim no more than the busiest customer or destination may
          // still take; when one is at its share, claim the reserve for the others only, passing
          // over its rows (once per wake-up from the queue, see newWork).
          let limit = Math.min(room, this.slots.headroom);
          let skip: string[] | undefined;
          const atShare = this.slots.customersAtShare();
          const work = `${this.newWork}:${atShare.join(',')}`;
          if (limit <= 0 || atShare.length > 0) {
            if (this.skipFoundNone === work) break;
            skip = atShare;
            limit = room;
          }
          const now = this.clock.now();
          this.slots.reserve(room);
          let claimed: ClaimedWork[];
          try {
            claimed = await this.repo.claimDue(this.owner, now, new Date(now.getTime() + this.opts.leaseMs), limit, skip);
            this.start(claimed); // in `inflight` before the reservation goes
          } finally {
            this.slots.unreserve(room);
          }
          if (claimed.length < limit) {
            if (skip) this.skipFoundNone = work;
            break;
          }
        }
      } while (this.again && this.running);
    } catch (err) {
      // Database down or similar: the next wake-up or poll tries again.
      this.logger.error(`claiming deliveries failed: ${(err as Error).message}`);
    } finally {
      this.draining = false;
      drained();
    }
  }

  /**
   * A lease for deliveries an emit in this process is about to create, so this worker sends them
   * straight from the emit's answer: no wake-up, no claim round trip, no claim write (the emit
   * inserts them leased). Up to the free slots (at most a claim's batch), reserved until
   * `adopt` (which the caller must call, with what it leased or nothing). Undefined when this
   * process runs no worker or has no free slot: the emit leaves its deliveries pending.
   */
  leaseForEmit(): ClaimRequest | undefined {
    if (!this.running) return undefined;
    // Not `free` (see WorkerSlots.emitLimit): what a claim answers beyond the slots left is given
    // back at once (see start), so `concurrency` still bounds what this worker holds.
    const limit = this.slots.emitLimit(this.inflight.size, this.opts.batchSize);
    if (limit <= 0) return undefined;
    this.slots.reserve(limit, true);
    const now = this.clock.now();
    return { owner: this.owner, now, leaseUntil: new Date(now.getTime() + this.opts.leaseMs), limit };
  }

  /** Takes over what an emit leased under `leaseForEmit`'s request (possibly nothing) and frees the rest of the reservation. */
  adopt(lease: ClaimRequest, claimed: ClaimedWork[]): void {
    this.slots.unreserve(lease.limit, true);
    if (this.running) this.start(claimed);
    // Stopped meanwhile: give the leases back at once rather than let them expire.
    else if (claimed.length > 0) void this.repo.releaseLeases(this.owner, claimed.map((d) => d.id), this.clock.now(), 'unstarted').catch(() => undefined);
  }

  /** Slots neither sending (or recording) nor promised to a claim in flight. */
  private get free(): number {
    return this.slots.free(this.inflight.size);
  }

  /** One batch of outcomes, and a claim for the slots they free (see `outcomes`). */
  private async writeOutcomes(batch: RecordInput[]): Promise<boolean[]> {
    // The batch's own slots count as free: its outcomes commit in the same transaction as the claim.
    // No more than the busiest customer or destination may still take (see WorkerSlots); when one
    // is at its share, the slots freed here are claimed by the drain these attempts' ends wake.
    // A customer held to its share (or its slice of the reserve): the drain these attempts' ends
    // wake claims for them instead, passing over its rows (this claim cannot).
    const limit =
      this.running && this.slots.customersAtShareAfter(batch.map((it) => it.d.id)).length === 0
        ? Math.max(0, Math.min(this.opts.batchSize, this.free + batch.length, this.slots.headroomAfter(batch.map((it) => it.d.id))))
        : 0;
    this.slots.reserve(limit);
    try {
      const now = this.clock.now();
      const { held, claimed } = await this.repo.recordAttempts(batch, limit > 0 ? { owner: this.owner, now, leaseUntil: new Date(now.getTime() + this.opts.leaseMs), limit } : undefined);
      // The claim that rode along found fewer due rows than it asked for: nothing more was due, so
      // these attempts' ends need not wake a claim of their own (new work wakes the worker itself).
      if (limit > 0 && claimed.length < limit) for (const it of batch) this.refilled.add(it.d.id);
      // These attempts are over (their outcomes committed): their share goes to what was claimed for them.
      for (const it of batch) this.unhold(it.d.id);
      if (this.running) this.start(claimed, batch.length);
      // Stopping meanwhile: give the new leases back at once rather than let them expire.
      else if (claimed.length > 0) await this.repo.releaseLeases(this.owner, claimed.map((d) => d.id), this.clock.now(), 'unstarted').catch(() => undefined);
      return held;
    } finally {
      this.slots.unreserve(limit);
    }
  }

  /** Counts the slot of an attempt that starts against its customer's and destination's share (see WorkerSlots). */
  private hold(id: string, customer: string, destination: string): void {
    this.slots.hold(id, customer, destination);
  }

  /** Gives an attempt's share back once its outcome is committed (or it ended otherwise). */
  private unhold(id: string): void {
    this.slots.release(id);
  }

  /** `freeing`: attempts still in `inflight` whose outcomes committed with this claim (their slots are free). */
  private start(claimed: ClaimedWork[], freeing = 0): void {
    // More than the slots left (an emit's lease and a claim overlapped): the excess goes back
    // unstarted, its charge given back, for the next claim.
    const room = this.slots.roomToStart(this.inflight.size - freeing);
    if (claimed.length > room) {
      const excess = claimed.splice(room);
      void this.repo
        .releaseLeases(this.owner, excess.map((d) => d.id), this.clock.now(), 'unstarted')
        .then(() => this.wake())
        .catch(() => undefined);
    }
    // Past a customer's or a destination's share (a claim that skipped customers found another
    // one's rows, an emit's lease): given back unstarted. A destination's are put off a second
    // when it is slow (none of its attempts ended lately), since no claim passes over
    // destinations: the next claim for the reserve then reaches other destinations' rows. A
    // destination that is moving (healthy, at its share because it is the only one) gets them
    // back due at once: put off a second, a healthy single-destination fan-out lost a third of its
    // throughput on PostgreSQL to these pauses. A takeover (lostSince) is kept: its lost attempt is logged first.
    const overCustomer: string[] = [];
    const overDestination: string[] = [];
    claimed = claimed.filter((d) => {
      if (!d.webhook || this.inflight.has(d.id)) return true;
      const admission = this.slots.admit(d.id, d.webhook.customerId, destinationOf(d.webhook.url), Boolean(d.lostSince));
      if (admission === 'held') return true;
      if (admission === 'customer_at_share') overCustomer.push(d.id);
      else overDestination.push(d.id);
      return false;
    });
    if (overCustomer.length > 0) void this.repo.releaseLeases(this.owner, overCustomer, this.clock.now(), 'unstarted').then(() => this.wake()).catch(() => undefined);
    if (overDestination.length > 0) {
      const now = this.clock.now();
      void this.repo.releaseLeases(this.owner, overDestination, now, 'unstarted', new Date(now.getTime() + DESTINATION_BUSY_DEFER_MS)).catch(() => undefined);
    }
    // Built once per event: a fanned-out event arrives as many rows of one claim.
    const bodies = new Map<string, (webhookId: string) => string>();
    for (const d of claimed) {
      // This worker's own lease lapsed while its attempt was still running (its event loop was
      // blocked past the lease, renewals included) and its own claim took the row back. The
      // running attempt still holds the row (same owner) and its outcome sets the attempt count
      // back: sending it a second time, or logging it as lost, would be wrong.
      if (this.inflight.has(d.id)) {
        this.logger.warn(`delivery ${d.id}: its lease lapsed while this worker was still sending it; the attempt in flight goes on`);
        continue;
      }
      const p = this.attempt(d, bodies)
        .catch((err) => this.logger.error(`delivery ${d.id} attempt could not be recorded: ${(err as Error).message}`))
        .finally(() => {
          this.inflight.delete(d.id);
          this.unhold(d.id);
          if (!this.refilled.delete(d.id)) this.wake();
        });
      this.inflight.set(d.id, p);
    }
  }

  private async releaseDeferred(items: { id: string; until: Date }[]): Promise<void[]> {
    const byTime = new Map<number, string[]>();
    for (const it of items) byTime.set(it.until.getTime(), [...(byTime.get(it.until.getTime()) ?? []), it.id]);
    const now = this.clock.now();
    for (const [until, ids] of byTime) await this.repo.releaseLeases(this.owner, ids, now, 'unstarted', new Date(until));
    return items.map(() => undefined);
  }

  /**
   * The probe that these deliveries were put off behind has answered (the circuit closed): they
   * are due now rather than at its deadline. Best effort: when this fails, the deadline stands.
   */
  private async bringForward(parked: ParkedDelivery[]): Promise<void> {
    const byDeadline = new Map<number, string[]>();
    for (const p of parked) byDeadline.set(p.until.getTime(), [...(byDeadline.get(p.until.getTime()) ?? []), p.id]);
    try {
      let moved = 0;
      for (const [until, ids] of byDeadline) moved += await this.repo.bringForward(ids, new Date(until), this.clock.now());
      if (moved > 0) this.wakeForNewWork();
    } catch (err) {
      this.logger.warn(`${parked.length} deliveries put off behind a probe that answered stay due at its deadline: ${(err as Error).message}`);
    }
  }

  /** One attempt of one delivery, start to recorded outcome. */
  /** A claim not to send (its webhook disabled or gone): held while paused by hand, sent once resumed; otherwise cancelled. */
  private async stopUnsent(d: ClaimedWork, lastError?: string): Promise<void> {
    const now = this.clock.now();
    if (!(await this.repo.holdClaimed(d, this.owner, now))) await this.repo.cancelClaimed(d, this.owner, now, lastError);
  }

  private async attempt(d: ClaimedWork, bodies: Map<string, (webhookId: string) => string>): Promise<void> {
    const { webhook, event } = d;
    if (!webhook || !event) return this.repo.cancelClaimed(d, this.owner, this.clock.now());
    // Disabled after this delivery was queued (a retry, or a race with the pause): never attempted.
    if (webhook.disabled) return this.stopUnsent(d, WEBHOOK_DISABLED);
    if (d.lostSince && (await this.recordLostAttempt(d))) return;
    // This customer's circuit for the destination (circuit/): while it is open, or throttled and
    // busy, the delivery is put off, its charge given back and its slot freed.
    const ticket = await this.circuits.admit(webhook);
    if ('until' in ticket) {
      await this.deferrals.push({ id: d.id, until: ticket.until });
      // Behind a half-open circuit's probe: due again as soon as the probe answers (bringForward).
      return this.circuits.park(ticket, d.id);
    }
    const startedAt = this.clock.now();
    let outcome: SendOutcome | undefined;
    try {
      const secrets = this.openSecrets(webhook, d.id, startedAt);
      outcome = secrets === null ? unreadableSecretOutcome(webhook.id) : await this.transport.send({
        deliveryId: d.id,
        attempt: d.attempts,
        destination: { webhookId: webhook.id, customerId: webhook.customerId, url: webhook.url, allowNonstandardPort: webhook.allowNonstandardPort },
        timeoutMs: this.opts.timeoutMs,
        // The webhook may have been deleted while its destination was checked: no attempt starts after its 204.
        confirm: () => this.repo.webhookExists(webhook.id),
        body: () => {
          let bodyFor = bodies.get(event.id);
          if (bodyFor === undefined) bodies.set(event.id, (bodyFor = this.bodyTemplate(event)));
          return bodyFor(webhook.id);
        },
        secrets: (at) => (secrets.previous !== null && webhook.previousSecretExpiresAt! > at ? [secrets.current, secrets.previous] : [secrets.current]),
      });
    } finally {
      this.circuits.settle(ticket, outcome);
    }
    if (outcome.kind === 'cancelled') return this.stopUnsent(d);
    const { statusCode, excerpt } = outcome;
    this.metrics?.deliveryAttempt(outcome.kind, outcome.durationMs / 1000);
    const attemptNo = d.attempts; // charged by the claim
    const next = decideNext(outcome, attemptNo, this.policy, outcome.kind === 'delivered' ? null : outcome.retryAfterMs);
    const now = this.clock.now();
    const rec: AttemptRecord = {
      attempt: {
        attemptNo,
        startedAt,
        durationMs: Math.round(outcome.durationMs),
        statusCode,
        outcome: outcome.kind,
        errorClass: outcome.kind === 'delivered' ? null : outcome.errorClass,
        responseExcerpt: excerpt,
      },
      state: next.state === 'retrying' ? 'pending' : next.state,
      nextAttemptAt: next.state === 'retrying' ? new Date(now.getTime() + next.delayMs) : null,
      lastError: outcome.kind === 'delivered' ? null : outcome.errorClass,
      webhookStatus: next.state,
    };
    if (outcome.kind !== 'delivered') {
      // One line per failed attempt, for operators: ids and classes only, never the body, URL or secret.
      this.logger.warn({
        msg: 'delivery attempt failed',
        webhook_id: webhook.id,
        delivery_id: d.id,
        attempt: attemptNo,
        error_class: outcome.errorClass,
        status_code: statusCode,
        next_attempt_at: rec.nextAttemptAt?.toISOString() ?? null,
        final_state: next.state === 'retrying' ? null : next.state,
      });
    }
    const held = await this.outcomes.push({ d, owner: this.owner, rec, now });
    if (!held) this.logger.warn(`delivery ${d.id}: lease lost during the attempt; the new owner decides its state`);
    // Counted once its outcome is recorded (the failure clock moved with it): a 410 disables, a long
    // outage may. Not awaited: the attempt is over, and while it stayed in `inflight` a claim of the
    // delivery's retry (due in a fraction of a second) was skipped as "still sending" and then left
    // to its lease (failed() never rejects).
    else if (outcome.kind !== 'delivered' && countsAsFailure(outcome.errorClass) && this.lifecycle) {
      void this.lifecycle.failed({ webhookId: webhook.id, at: startedAt, gone: statusCode === 410 });
    }
  }

  /**
   * The webhook's signing secrets in clear: the current one, and the previous one while the
   * rotation's overlap lasts at `at`. Null when one of them does not decrypt: logged here by
   * webhook id (the reason stays in the operator's log), and the attempt fails as
   * `secret_unreadable` without anything sent.
   */
  private openSecrets(webhook: NonNullable<ClaimedWork['webhook']>, deliveryId: string, at: Date): { current: string; previous: string | null } | null {
    let column: 'secret' | 'previous_secret' = 'secret';
    try {
      const current = this.secretBox.decrypt(webhook.secret, webhookSecretPlace(webhook.id, 'secret'));
      const [, stored = null] = signingSecrets(webhook, at);
      column = 'previous_secret';
      const previous = stored === null ? null : this.secretBox.decrypt(stored, webhookSecretPlace(webhook.id, 'previous_secret'));
      return { current, previous };
    } catch (err) {
      if (!(err instanceof SecretDecryptionError)) throw err;
      this.logger.error({ msg: 'stored signing secret does not decrypt', webhook_id: webhook.id, delivery_id: deliveryId, column, reason: err.message });
      return null;
    }
  }

  /** The body template of `event`, built again only when it is not among the recent ones (or its row differs). */
  private bodyTemplate(event: NonNullable<ClaimedWork['event']>): (webhookId: string) => string {
    const kept = this.bodyTemplates.get(event.id);
    const createdAtMs = event.createdAt.getTime();
    if (kept !== undefined && kept.payload === event.payload && kept.type === event.type && kept.subreddit === event.subreddit && kept.createdAtMs === createdAtMs) return kept.bodyFor;
    const data = JSON.parse(event.payload) as Record<string, unknown>;
    const bodyFor = deliveryBodyTemplate({ id: event.id, type: event.type, subreddit: event.subreddit, createdAt: event.createdAt, data });
    this.bodyTemplates.set(event.id, { payload: event.payload, type: event.type, subreddit: event.subreddit, createdAtMs, bodyFor });
    return bodyFor;
  }

  /**
   * This claim took the delivery over from a worker whose lease expired: that worker claimed it
   * (charging an attempt) and never recorded an outcome, most likely because the attempt killed
   * it. The log gets that attempt as `worker_lost`, before anything is sent, so a chain of
   * workers dying on the same delivery leaves one row per death. When that lost attempt was the
   * last the schedule allows, the delivery fails here without another send (poison-message
   * handling) and the current claim's charge is given back. Returns whether it ended so.
   */
  private async recordLostAttempt(d: ClaimedWork): Promise<boolean> {
    const lostNo = d.attempts - 1;
    const now = this.clock.now();
    const since = d.lostSince!;
    const lost = {
      attemptNo: lostNo,
      startedAt: since,
      durationMs: Math.max(0, now.getTime() - since.getTime()),
      statusCode: null,
      outcome: 'transient',
      errorClass: WORKER_LOST,
      responseExcerpt: 'the worker stopped before recording the outcome of this attempt; its lease expired and another worker took the delivery over',
    };
    this.metrics?.deliveryAttempt('transient', lost.durationMs / 1000);
    this.logger.warn(`delivery ${d.id}: attempt ${lostNo} was lost with its worker (claimed ${since.toISOString()})`);
    if (decideNext({ kind: 'transient', errorClass: WORKER_LOST }, lostNo, this.policy, null).state !== 'failed') {
      await this.repo.logAttempt(d.id, lost);
      return false;
    }
    const held = await this.outcomes.push({
      d,
      owner: this.owner,
      rec: { attempt: lost, state: 'failed', nextAttemptAt: null, lastError: WORKER_LOST, webhookStatus: 'failed' },
      now,
    });
    if (!held) this.logger.warn(`delivery ${d.id}: lease lost while failing it; the new owner decides its state`);
    return true;
  }

  /**
   * Stops claiming, lets attempts in flight finish within the attempt timeout, then gives back
   * what is left. onModuleDestroy, not onApplicationShutdown: TypeORM closes its pool in the
   * latter, and the waker must stop listening before that (see QueueWaker.stop), and the
   * attempts still in flight need the pool to record their outcome.
   */
  async onModuleDestroy(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    if (this.scheduler?.doesExist('interval', POLL_INTERVAL_NAME)) this.scheduler.deleteInterval(POLL_INTERVAL_NAME);
    if (this.pollTimer) clearInterval(this.pollTimer);
    clearTimeout(this.lowWaterTimer);
    await this.drainDone;
    const pending = [...this.inflight.values()];
    const bound = new Promise((r) => setTimeout(r, this.opts.timeoutMs + 1000).unref());
    await Promise.race([Promise.allSettled(pending), bound]);
    // Renewals went on while attempts finished; they stop before the leases are given back.
    clearInterval(this.renewTimer);
    clearInterval(this.activityTimer);
    await this.renewing;
    const left = [...this.inflight.keys()];
    if (left.length > 0) await this.repo.releaseLeases(this.owner, left, this.clock.now(), 'in_flight').catch(() => undefined);
    await this.waker.stop();
  }

  /** Attempts currently in flight (for graceful-shutdown tests and metrics). */
  get inFlight(): number {
    return this.inflight.size;
  }
}

/** What the customer reads of such an attempt: how to fix it, never the decryption error. */
function unreadableSecretOutcome(webhookId: string): SendFailure {
  const excerpt = `this webhook's signing secret could not be read, so nothing was sent: rotate it (POST /v1/webhooks/${webhookId}/rotate-secret), then retry the delivery`;
  return { kind: 'permanent', stage: 'before_connect', errorClass: SECRET_UNREADABLE, statusCode: null, excerpt, retryAfterMs: null, durationMs: 0 };
}

/** During a rotation both secrets sign, so receivers can switch at their own pace (24 h). Stored form: the caller decrypts. */
export function signingSecrets(w: Pick<EndpointEntity, 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>, now: Date): string[] {
  return w.previousSecret && w.previousSecretExpiresAt && w.previousSecretExpiresAt > now ? [w.secret, w.previousSecret] : [w.secret];
}
