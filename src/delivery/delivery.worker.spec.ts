import { Logger } from '@nestjs/common';
import type { Clock } from '../common/clock';
import type { DataSource } from 'typeorm';
import { generateEncryptionKey } from '../crypto/key-ring';
import { SecretBox } from '../crypto/secret-box';
import { DestinationCircuitBreaker } from './circuit/destination-circuit-breaker';
import type { DestinationCircuitStore } from './circuit/destination-circuit.store';
import { InMemoryCircuitStore } from './circuit/in-memory-circuit.store.fake';
import { DeliveryModuleOptions, resolveDeliveryOptions } from './delivery.options';
import { DeliveryWorker, WORKER_LOST } from './delivery.worker';
import { SecretDecryptionError } from '../crypto/key-ring';
import type { WebhookLifecycle } from './lifecycle/webhook-lifecycle';
import type { WebhookFailure } from './status/webhook-delivery-status';
import * as payload from './payload';
import type { DeliveryQueue } from './queue/delivery-queue';
import { InProcessWaker } from './queue/in-process.waker';
import { webhookSecretPlace } from './endpoint.entity';
import type { AttemptRecord, ClaimedWork, ClaimRequest, RecordInput } from './queue/types';
import { DeliveryTransport, SendOutcome, TransportRequest } from './transport/delivery-transport';

/** A clock that moves only when a test says so. */
class FakeClock implements Clock {
  at = new Date('2026-01-02T03:04:05.000Z');
  now(): Date {
    return new Date(this.at.getTime());
  }
}

function work(n: number, over: Partial<ClaimedWork> = {}): ClaimedWork {
  const id = `msg_${String(n).padStart(26, '0')}`;
  return {
    id,
    eventId: 'evt_1',
    webhookId: `wh_${n}`,
    attempts: 1,
    lostSince: null,
    webhook: { id: `wh_${n}`, customerId: 'cus_1', url: `https://hooks.test/${n}`, allowNonstandardPort: false, secret: 'whsec_current', previousSecret: null, previousSecretExpiresAt: null, disabled: false },
    event: { id: 'evt_1', type: 'trends.surge', subreddit: 'rust', payload: '{"n":1}', createdAt: new Date('2026-01-01T00:00:00.000Z') },
    ...over,
  };
}

/**
 * The queue as the worker uses it (the repository's method signatures): due work is handed out in
 * order, every claim charges nothing further (the rows come charged), and each call is recorded.
 */
class FakeQueue {
  due: ClaimedWork[] = [];
  deleted = new Set<string>();
  claims: { owner: string; now: Date; leaseUntil: Date; limit: number; skip?: readonly string[] }[] = [];
  batches: RecordInput[][] = [];
  outcomeClaims: (ClaimRequest | undefined)[] = [];
  logged: { deliveryId: string; attempt: AttemptRecord['attempt'] }[] = [];
  cancelled: string[] = [];
  released: { ids: string[]; what: 'unstarted' | 'in_flight' }[] = [];
  /** When set, recordAttempts waits for it before answering. */
  holdRecords?: Promise<void>;

  /** Which call leased each delivery. */
  leasedBy = new Map<string, 'claimDue' | 'recordAttempts'>();

  private take(limit: number, by: 'claimDue' | 'recordAttempts', skip: readonly string[] = []): ClaimedWork[] {
    const taken: ClaimedWork[] = [];
    this.due = this.due.filter((d) => {
      if (taken.length >= limit || skip.includes(d.webhook?.customerId ?? '')) return true;
      taken.push(d);
      return false;
    });
    for (const d of taken) this.leasedBy.set(d.id, by);
    return taken;
  }

  /** When set, claimDue waits for it before taking its rows. */
  holdClaims?: Promise<void>;

  async claimDue(owner: string, now: Date, leaseUntil: Date, limit: number, skip?: readonly string[]): Promise<ClaimedWork[]> {
    this.claims.push({ owner, now, leaseUntil, limit, ...(skip ? { skip } : {}) });
    await this.holdClaims;
    return this.take(limit, 'claimDue', skip);
  }

  async recordAttempts(inputs: RecordInput[], claim?: ClaimRequest): Promise<{ held: boolean[]; claimed: ClaimedWork[] }> {
    this.batches.push(inputs);
    this.outcomeClaims.push(claim);
    await this.holdRecords;
    return { held: inputs.map(() => true), claimed: claim ? this.take(claim.limit, 'recordAttempts') : [] };
  }

  renewals: { owner: string; ids: string[]; leaseUntil: Date }[] = [];
  /** When set, the next renewal fails with it (once). */
  renewError?: Error;
  /** When set, renewLeases waits for it before answering. */
  holdRenewals?: Promise<void>;
  /** Calls in order, for what must come before what. */
  calls: string[] = [];

  async renewLeases(owner: string, ids: string[], leaseUntil: Date): Promise<string[]> {
    this.renewals.push({ owner, ids: [...ids].sort(), leaseUntil });
    this.calls.push('renew');
    await this.holdRenewals;
    const err = this.renewError;
    this.renewError = undefined;
    if (err) throw err;
    return ids;
  }

  async logAttempt(deliveryId: string, attempt: AttemptRecord['attempt']): Promise<void> {
    this.logged.push({ deliveryId, attempt });
  }

  /** Why each cancel was made, by delivery id (undefined: no reason given). */
  cancelReasons = new Map<string, string | undefined>();

  /** Webhooks paused by hand: their claimed deliveries are held, not cancelled. */
  paused = new Set<string>();
  held: string[] = [];

  async holdClaimed(d: { id: string; webhookId: string }): Promise<boolean> {
    if (!this.paused.has(d.webhookId)) return false;
    this.held.push(d.id);
    return true;
  }

  async cancelClaimed(d: { id: string }, _owner?: string, _now?: Date, lastError?: string): Promise<void> {
    this.cancelled.push(d.id);
    this.cancelReasons.set(d.id, lastError);
  }

  /** The due times given with released rows (a destination's or a circuit's deferral). */
  dueAt = new Map<string, Date>();

  async releaseLeases(_owner: string, ids: string[], _now: Date, what: 'unstarted' | 'in_flight', dueAt?: Date): Promise<void> {
    this.released.push({ ids, what });
    if (dueAt) for (const id of ids) this.dueAt.set(id, dueAt);
    this.calls.push(`release:${what}`);
  }

  async webhookExists(webhookId: string): Promise<boolean> {
    return !this.deleted.has(webhookId);
  }

  /** bringForward calls; `parked` rows it moves come due again (back into `due`). */
  broughtForward: { ids: string[]; putOffUntil: Date; now: Date }[] = [];
  parked: ClaimedWork[] = [];

  async bringForward(ids: readonly string[], putOffUntil: Date, now: Date): Promise<number> {
    this.broughtForward.push({ ids: [...ids], putOffUntil, now });
    const moving = this.parked.filter((d) => ids.includes(d.id));
    this.parked = this.parked.filter((d) => !ids.includes(d.id));
    this.due.push(...moving);
    return moving.length;
  }

  get records(): RecordInput[] {
    return this.batches.flat();
  }
}

/**
 * A transport that behaves like a real one towards the worker (checks, then confirms, then builds
 * and signs) and ends each send as the test decides: at once with `answer`, or when released.
 */
class FakeTransport extends DeliveryTransport {
  answer: (req: TransportRequest) => SendOutcome | Promise<SendOutcome> = () => delivered();
  /** Sends waiting for `release`, when `hold` is on. */
  hold = false;
  private held: { req: TransportRequest; settle: (o: SendOutcome | Error) => void }[] = [];
  sent: TransportRequest[] = [];
  bodies: string[] = [];
  inFlight = 0;
  maxInFlight = 0;

  async send(req: TransportRequest): Promise<SendOutcome> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (!(await req.confirm())) return { kind: 'cancelled' };
      this.sent.push(req);
      this.bodies.push(req.body());
      req.secrets(new Date());
      if (this.hold) {
        const o = await new Promise<SendOutcome | Error>((settle) => this.held.push({ req, settle }));
        if (o instanceof Error) throw o;
        return o;
      }
      return await this.answer(req);
    } finally {
      this.inFlight--;
    }
  }

  get waiting(): number {
    return this.held.length;
  }

  /** Ends the oldest held sends (all of them by default) with `outcome`. */
  release(outcome: SendOutcome | Error = delivered(), count = this.held.length): void {
    for (const h of this.held.splice(0, count)) h.settle(outcome);
  }
}

const delivered = (): SendOutcome => ({ kind: 'delivered', statusCode: 200, excerpt: 'ok', durationMs: 12.4 });

/** Lets timers, setImmediate and promise chains run until `cond` holds (or fails the test). */
async function until(cond: () => boolean, what: string, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

describe('DeliveryWorker', () => {
  let queue: FakeQueue;
  let transport: FakeTransport;
  let clock: FakeClock;
  let circuits: InMemoryCircuitStore;
  const workers: DeliveryWorker[] = [];

  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(new Logger()));

  beforeEach(() => {
    queue = new FakeQueue();
    transport = new FakeTransport();
    clock = new FakeClock();
    circuits = new InMemoryCircuitStore();
  });

  afterEach(async () => {
    transport.release();
    await Promise.all(workers.splice(0).map((w) => w.onModuleDestroy()));
  });

  /** What the worker reported to the failure lifecycle (see WebhookLifecycle.failed). */
  let failures: WebhookFailure[] = [];

  function worker(
    options: Partial<DeliveryModuleOptions> = {},
    secretBox = { decrypt: (stored: string) => `clear:${stored}` } as unknown as SecretBox,
    failed: (f: WebhookFailure) => Promise<void> = async (f) => void failures.push(f),
  ): DeliveryWorker {
    const opts: DeliveryModuleOptions = { concurrency: 4, batchSize: 4, leaseMs: 60_000, timeoutMs: 10_000, pollIntervalMs: 60_000, retryScheduleSeconds: [5, 300], random: () => 0.5, fairReserve: 0, ...options };
    const breaker = new DestinationCircuitBreaker(circuits as unknown as DestinationCircuitStore, clock, opts);
    failures = [];
    const lifecycle = { failed } as unknown as WebhookLifecycle;
    const w = new DeliveryWorker(queue as unknown as DeliveryQueue, transport, new InProcessWaker(), clock, opts, secretBox, breaker, undefined, undefined, lifecycle);
    workers.push(w);
    return w;
  }

  async function run(w: DeliveryWorker): Promise<void> {
    await w.onApplicationBootstrap();
  }

  describe('circuit breaker', () => {
    const at = (n: number, customerId: string): ClaimedWork => {
      const w = work(n);
      return { ...w, webhook: { ...w.webhook!, customerId, url: `https://hanging.test:8443/in/${n}` } };
    };
    const timeout: SendOutcome = { kind: 'transient', stage: 'during', errorClass: 'timeout', statusCode: null, excerpt: null, retryAfterMs: null, durationMs: 1000 };

    it("puts off an open circuit's deliveries uncharged and without a slot until its pause ends, while another customer at the same host and port is sent", async () => {
      transport.answer = (req) => (req.destination.customerId === 'cus_a' ? timeout : delivered());
      queue.due = [at(1, 'cus_a'), at(2, 'cus_a')];
      const w = worker({ concurrency: 4, batchSize: 4, circuit: { failures: 1, throttle: 1, pauseMs: 30_000 } });
      await run(w);
      await until(() => queue.records.length === 2, 'two timeouts recorded');
      await until(() => circuits.rows.get('cus_a\nhanging.test:8443')?.state === 'open', 'the circuit open');
      const sent = transport.sent.length;
      queue.due = [at(3, 'cus_a'), at(4, 'cus_b'), at(5, 'cus_a')];
      (w as unknown as { wakeForNewWork(): void }).wakeForNewWork();
      await until(() => queue.records.length === 3 && queue.dueAt.size === 2, "b's delivery sent, a's put off");
      expect(transport.sent.slice(sent).map((r) => r.deliveryId)).toEqual([at(4, 'cus_b').id]);
      const pauseEnd = circuits.rows.get('cus_a\nhanging.test:8443')!.openedUntil;
      expect(Object.fromEntries(queue.dueAt)).toEqual({ [at(3, 'cus_a').id]: pauseEnd, [at(5, 'cus_a').id]: pauseEnd });
      // Given back unstarted: the queue refunds the claim's charge; no attempt is logged for them.
      expect(queue.released.filter((r) => r.ids.includes(at(3, 'cus_a').id))).toEqual([{ ids: [at(3, 'cus_a').id, at(5, 'cus_a').id], what: 'unstarted' }]);
      expect(queue.records.map((r) => r.d.id)).not.toContain(at(3, 'cus_a').id);
      expect(w.inFlight).toBe(0);
    });

    it('sends what was put off behind a half-open probe as soon as the probe answers, not at its deadline', async () => {
      const key = 'cus_a\nhanging.test:8443';
      // The pause is over: the next attempt there is the probe.
      circuits.rows.set(key, { customerId: 'cus_a', destination: 'hanging.test:8443', state: 'open', consecutiveFailures: 2, openedUntil: clock.now(), openCount: 1, updatedAt: new Date(clock.at.getTime() - 30_000) });
      transport.hold = true;
      queue.due = [at(1, 'cus_a'), at(2, 'cus_a'), at(3, 'cus_a')];
      queue.parked = [at(2, 'cus_a'), at(3, 'cus_a')];
      const w = worker({ concurrency: 4, batchSize: 4, timeoutMs: 1000, leaseMs: 60_000, circuit: { failures: 1, throttle: 1, pauseMs: 30_000 } });
      await (w as unknown as { circuits: DestinationCircuitBreaker }).circuits.refresh(); // as its bootstrap does
      await run(w);
      await until(() => transport.waiting === 1 && queue.dueAt.size === 2, 'the probe sent, the others put off');
      const deadline = new Date(clock.at.getTime() + 1000 + 60_000);
      expect(Object.fromEntries(queue.dueAt)).toEqual({ [at(2, 'cus_a').id]: deadline, [at(3, 'cus_a').id]: deadline });
      expect(circuits.rows.get(key)).toMatchObject({ state: 'half_open', openedUntil: deadline });
      expect(queue.broughtForward).toEqual([]);

      // The probe answers; the clock has not moved: the two are due and sent now, uncharged by the wait.
      transport.release(delivered());
      await until(() => transport.waiting === 2, 'the two put off sent');
      expect(circuits.rows.has(key)).toBe(false);
      expect(queue.broughtForward).toEqual([{ ids: [at(2, 'cus_a').id, at(3, 'cus_a').id], putOffUntil: deadline, now: clock.now() }]);
      expect(transport.sent.map((r) => r.deliveryId)).toEqual([at(1, 'cus_a').id, at(2, 'cus_a').id, at(3, 'cus_a').id]);
    });
  });

  describe('fairness', () => {
    const of = (n: number, customerId: string, host: string): ClaimedWork => {
      const w = work(n);
      return { ...w, webhook: { ...w.webhook!, customerId, url: `https://${host}/hook/${n}` } };
    };
    const sendingFor = () => transport.sent.map((r) => r.destination.customerId);

    it('keeps a reserve of slots for other customers while one customer holds its share with attempts that hang', async () => {
      // Customer A's 20 deliveries are due first and every attempt hangs; B's two come after them.
      queue.due = [...Array.from({ length: 20 }, (_, i) => of(i, 'cus_a', `a${i}.test`)), of(100, 'cus_b', 'b.test'), of(101, 'cus_b', 'b.test')];
      transport.hold = true;
      const w = worker({ concurrency: 8, batchSize: 8, fairReserve: 2 });
      await run(w);
      await until(() => transport.waiting === 7, 'seven sends');
      await until(() => queue.released.length === 1, "B's second delivery given back");
      await new Promise((r) => setTimeout(r, 20));
      // A alone took the whole share (6); B, a second customer arriving when only the reserve is
      // left, takes its slice of it (2 slots / 2 customers = 1): the last slot stays for a third.
      expect(sendingFor().filter((c) => c === 'cus_a')).toHaveLength(6);
      expect(sendingFor().filter((c) => c === 'cus_b')).toHaveLength(1);
      expect(queue.released).toEqual([{ ids: [of(101, 'cus_b', 'b.test').id], what: 'unstarted' }]);
      // The claims for the reserve passed over A's rows, then A's and B's, and asked the database for no more of them.
      expect(queue.claims.map((c) => [c.limit, c.skip ?? []])).toEqual([
        [6, []],
        [2, ['cus_a']],
        [1, ['cus_a', 'cus_b']],
      ]);
      queue.due.push(of(200, 'cus_c', 'c.test'));
      (w as unknown as { wakeForNewWork(): void }).wakeForNewWork();
      await until(() => sendingFor().includes('cus_c'), "C's delivery sent");
      expect(transport.waiting).toBe(8);
    });

    it('gives a new delivery of another customer a reserved slot at once, without waiting for a hanging attempt', async () => {
      queue.due = Array.from({ length: 20 }, (_, i) => of(i, 'cus_a', `a${i}.test`));
      transport.hold = true;
      const w = worker({ concurrency: 8, batchSize: 8, fairReserve: 2 });
      await run(w);
      await until(() => transport.waiting === 6, 'six of A');
      await new Promise((r) => setTimeout(r, 20));
      expect(transport.waiting).toBe(6); // A never gets the reserve, even with nobody else due
      const claims = queue.claims.length;
      // Nothing else was due: A's attempts ending does not make the worker look past A again and again.
      transport.release(delivered(), 1);
      await until(() => transport.waiting === 6, 'the freed slot refilled with A');
      expect(queue.claims.slice(claims).every((c) => c.skip === undefined)).toBe(true);

      queue.due.unshift(of(100, 'cus_b', 'b.test'));
      // What an emit's wake-up (or the poll) does.
      (w as unknown as { wakeForNewWork(): void }).wakeForNewWork();
      await until(() => sendingFor().includes('cus_b'), "B's delivery sent");
      expect(transport.waiting).toBe(7);
    });

    it('holds one destination to the share of slots, whoever its customers, and puts its other deliveries off', async () => {
      // Two customers sending to the same host: together they stay within the share.
      queue.due = [...Array.from({ length: 4 }, (_, i) => of(i, 'cus_a', 'shared.test')), ...Array.from({ length: 4 }, (_, i) => of(10 + i, 'cus_c', 'shared.test')), of(100, 'cus_b', 'b.test')];
      transport.hold = true;
      const w = worker({ concurrency: 8, batchSize: 8, fairReserve: 2 });
      await run(w);
      await until(() => transport.waiting === 7, 'seven sends');
      await new Promise((r) => setTimeout(r, 20));
      expect(transport.sent.filter((r) => r.destination.url.includes('shared.test'))).toHaveLength(6);
      expect(sendingFor()).toContain('cus_b');
    });
  });

  describe("a destination at its share: what goes back", () => {
    type Inside = { hold(id: string, customer: string, destination: string): void; unhold(id: string): void; start(claimed: ClaimedWork[]): void };
    const to = (n: number, customerId: string): ClaimedWork => {
      const w = work(n);
      return { ...w, webhook: { ...w.webhook!, customerId, url: `https://shared.test/hook/${n}` } };
    };
    /** A worker (not started) holding its destination share (6 of 8) at shared.test; `moving`: one of them just ended and was replaced. */
    function atShare(moving: boolean): Inside {
      const w = worker({ concurrency: 8, batchSize: 8, fairReserve: 2 }) as unknown as Inside;
      for (let i = 0; i < 6; i++) w.hold(`held_${i}`, 'cus_a', 'shared.test');
      if (moving) {
        w.unhold('held_0');
        w.hold('held_6', 'cus_a', 'shared.test');
      }
      return w;
    }

    it('puts a slow destination\'s extra deliveries off a second, so the next claim for the reserve reaches other destinations', async () => {
      atShare(false).start([to(50, 'cus_c')]);
      await until(() => queue.released.length === 1, 'given back');
      expect(queue.released).toEqual([{ ids: [to(50, 'cus_c').id], what: 'unstarted' }]);
      expect(queue.dueAt.get(to(50, 'cus_c').id)).toEqual(new Date(clock.now().getTime() + 1000));
    });

    it('starts a moving destination\'s deliveries past its share (a healthy single-destination fan-out keeps every slot)', async () => {
      const w = atShare(true);
      w.start([to(51, 'cus_c')]);
      await until(() => transport.sent.length === 1, 'sent');
      expect(queue.released).toEqual([]);
      // Over MOVING_MS after the last fast end there, it counts as slow again.
      clock.at = new Date(clock.at.getTime() + 251);
      w.start([to(52, 'cus_d')]);
      await until(() => queue.released.length === 1, 'given back');
      expect(queue.dueAt.has(to(52, 'cus_d').id)).toBe(true);
    });
  });

  describe('slots', () => {
    it('never has more attempts in flight than the concurrency, and refills slots as attempts end', async () => {
      queue.due = Array.from({ length: 10 }, (_, i) => work(i));
      transport.hold = true;
      const w = worker({ concurrency: 4, batchSize: 4 });
      await run(w);
      await until(() => transport.waiting === 4, 'four sends');
      expect(w.inFlight).toBe(4);
      expect(queue.claims.map((c) => c.limit)).toEqual([4]);

      transport.release(delivered(), 1);
      await until(() => queue.records.length === 1 && transport.waiting === 4, 'a freed slot refilled');
      while (queue.records.length < 10) {
        transport.release(delivered(), 1);
        await new Promise((r) => setTimeout(r, 1));
      }
      expect(transport.maxInFlight).toBe(4);
      expect(transport.sent.map((r) => r.deliveryId)).toEqual(Array.from({ length: 10 }, (_, i) => work(i).id));
      await until(() => w.inFlight === 0, 'all slots free');
    });

    it('frees the slot of an attempt that throws, and goes on with the next delivery', async () => {
      queue.due = [work(1), work(2), work(3)];
      let calls = 0;
      transport.answer = () => {
        if (++calls === 1) throw new Error('transport bug');
        return delivered();
      };
      const w = worker({ concurrency: 1, batchSize: 1 });
      await run(w);
      await until(() => queue.records.length === 2, 'the other two recorded');
      expect(transport.sent).toHaveLength(3);
      expect(queue.records.map((r) => r.d.id)).toEqual([work(2).id, work(3).id]);
      await until(() => w.inFlight === 0, 'all slots free');
    });

    it('claims with a lease of leaseMs from the clock, and the outcome write claims for the slots it frees', async () => {
      queue.due = [work(1), work(2), work(3)];
      transport.hold = true;
      const w = worker({ concurrency: 2, batchSize: 2, leaseMs: 30_000 });
      await run(w);
      await until(() => transport.waiting === 2, 'two sends');
      expect(queue.claims).toEqual([{ owner: w.owner, now: clock.at, leaseUntil: new Date(clock.at.getTime() + 30_000), limit: 2 }]);

      clock.at = new Date(clock.at.getTime() + 1000);
      transport.release();
      await until(() => transport.waiting === 1, 'the third delivery sent');
      // Both outcomes commit together with a claim for their two slots, leased from the clock's now.
      expect(queue.batches.map((b) => b.length)).toEqual([2]);
      expect(queue.outcomeClaims).toEqual([{ owner: w.owner, now: clock.at, leaseUntil: new Date(clock.at.getTime() + 30_000), limit: 2 }]);
      // No claim round trip of its own: the third delivery was leased by the outcome write.
      expect(queue.leasedBy.get(work(3).id)).toBe('recordAttempts');
    });
  });

  it('does not claim again after an outcome write whose claim found the queue empty', async () => {
    queue.due = [work(1)];
    const w = worker({ concurrency: 2, batchSize: 2 });
    await run(w);
    await until(() => queue.records.length === 1 && w.inFlight === 0, 'the outcome recorded');
    await new Promise((r) => setTimeout(r, 20));
    expect(queue.claims).toHaveLength(1); // the start's claim; the outcome write claimed for the rest
    expect(queue.outcomeClaims).toEqual([expect.objectContaining({ limit: 2 })]);
    // New work still wakes it.
    queue.due = [work(2)];
    w.wake();
    await until(() => queue.records.length === 2, 'the next delivery recorded');
  });

  describe('an emit’s lease (leaseForEmit / adopt)', () => {
    it('leases no slot without a running worker, and none while every slot is sending', async () => {
      const w = worker({ concurrency: 2, batchSize: 2 });
      expect(w.leaseForEmit()).toBeUndefined();
      queue.due = [work(1), work(2)];
      transport.hold = true;
      await run(w);
      await until(() => transport.waiting === 2, 'two sends');
      expect(w.leaseForEmit()).toBeUndefined();
    });

    it('sends what the emit leased at once, even with a claim in flight; what that claim answers beyond the concurrency goes back unstarted', async () => {
      let answerClaims!: () => void;
      queue.holdClaims = new Promise((r) => (answerClaims = r));
      transport.hold = true;
      const w = worker({ concurrency: 2, batchSize: 2, leaseMs: 30_000 });
      await run(w);
      await until(() => queue.claims.length === 1, 'the first claim in flight');
      const lease = w.leaseForEmit()!;
      expect(lease).toEqual({ owner: w.owner, now: clock.at, leaseUntil: new Date(clock.at.getTime() + 30_000), limit: 2 });
      w.adopt(lease, [work(1), work(2)]);
      await until(() => transport.waiting === 2, 'the emit’s two deliveries sent without a claim');
      // The claim that was in flight finds two more rows: no slot is left, so they go back.
      queue.due = [work(3), work(4)];
      answerClaims();
      await until(() => queue.released.length === 1, 'the excess released');
      expect(queue.released).toEqual([{ ids: [work(3).id, work(4).id], what: 'unstarted' }]);
      expect(transport.maxInFlight).toBe(2);
      expect(w.inFlight).toBe(2);
    });
  });

  it('writes the outcomes of attempts that end together as one batch', async () => {
    queue.due = Array.from({ length: 6 }, (_, i) => work(i));
    transport.hold = true;
    const w = worker({ concurrency: 8, batchSize: 8 });
    await run(w);
    await until(() => transport.waiting === 6, 'six sends');
    transport.release();
    await until(() => queue.records.length === 6, 'six outcomes');
    expect(queue.batches.map((b) => b.length)).toEqual([6]);
  });

  it('holds the outcomes of the first attempts to end while most of the others still send, and writes them with those that end a moment later', async () => {
    queue.due = Array.from({ length: 6 }, (_, i) => work(i));
    transport.hold = true;
    const w = worker({ concurrency: 8, batchSize: 8 });
    await run(w);
    await until(() => transport.waiting === 6, 'six sends');
    transport.release(delivered(), 2);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(queue.batches).toEqual([]); // 2 of 6 ended: fewer than half the concurrency, the rest still sending
    transport.release(delivered(), 4);
    await until(() => queue.records.length === 6, 'six outcomes');
    expect(queue.batches.map((b) => b.length)).toEqual([6]);
  });

  it('writes a held outcome after a short wait when the others do not end', async () => {
    queue.due = [work(1), work(2), work(3)];
    transport.hold = true;
    const w = worker({ concurrency: 8, batchSize: 8 });
    await run(w);
    await until(() => transport.waiting === 3, 'three sends');
    transport.release(delivered(), 1);
    await until(() => queue.records.length === 1, 'the first outcome', 500);
    expect(transport.waiting).toBe(2);
  });

  it('builds the body once per event for the deliveries of one claim, each with its own webhook id', async () => {
    queue.due = [work(1), work(2)];
    const w = worker();
    await run(w);
    await until(() => queue.records.length === 2, 'two outcomes');
    expect(transport.bodies.map((b) => (JSON.parse(b) as { data: { webhook_id: string } }).data.webhook_id)).toEqual(['wh_1', 'wh_2']);
  });

  it('keeps an event’s body template from one claim to the next: a fan-out arrives as many claims', async () => {
    const built = jest.spyOn(payload, 'deliveryBodyTemplate');
    try {
      queue.due = [1, 2, 3, 4, 5, 6].map((n) => work(n));
      const w = worker({ concurrency: 2, batchSize: 2 });
      await run(w);
      await until(() => queue.records.length === 6, 'six outcomes');
      expect(queue.claims.length + queue.outcomeClaims.filter((c) => c !== undefined).length).toBeGreaterThanOrEqual(3);
      expect(built).toHaveBeenCalledTimes(1);
      expect(transport.bodies.map((b) => (JSON.parse(b) as { data: { webhook_id: string } }).data.webhook_id).sort()).toEqual(['wh_1', 'wh_2', 'wh_3', 'wh_4', 'wh_5', 'wh_6']);
      expect(new Set(transport.bodies.map((b) => b.replace(/"webhook_id":"wh_\d"/, ''))).size).toBe(1);
    } finally {
      built.mockRestore();
    }
  });

  it('builds the template again for a row of the same event id that differs from the one kept', async () => {
    queue.due = [work(1), work(2, { event: { id: 'evt_1', type: 'trends.surge', subreddit: 'rust', payload: '{"n":2}', createdAt: new Date('2026-01-01T00:00:00.000Z') } })];
    const w = worker({ concurrency: 1, batchSize: 1 });
    await run(w);
    await until(() => queue.records.length === 2, 'two outcomes');
    expect(transport.bodies.map((b) => (JSON.parse(b) as { data: { webhook_id: string; n: number } }).data)).toEqual([
      { event_id: 'evt_1', webhook_id: 'wh_1', subreddit: 'rust', n: 1 },
      { event_id: 'evt_1', webhook_id: 'wh_2', subreddit: 'rust', n: 2 },
    ]);
  });

  it('hands the transport the claimed delivery: destination, attempt number, time limit and the secrets signing at that moment', async () => {
    const expires = new Date(clock.at.getTime() + 60_000);
    const base = work(1);
    queue.due = [work(1, { attempts: 2, webhook: { ...base.webhook!, previousSecret: 'whsec_previous', previousSecretExpiresAt: expires } })];
    const w = worker({ timeoutMs: 7000 });
    await run(w);
    await until(() => queue.records.length === 1, 'the outcome');
    const [req] = transport.sent;
    expect(req).toMatchObject({ deliveryId: base.id, attempt: 2, timeoutMs: 7000, destination: { webhookId: 'wh_1', customerId: 'cus_1', url: 'https://hooks.test/1', allowNonstandardPort: false } });
    expect(req.secrets(clock.at)).toEqual(['clear:whsec_current', 'clear:whsec_previous']);
    expect(req.secrets(expires)).toEqual(['clear:whsec_current']);
  });

  describe('cancel', () => {
    it('cancels without an attempt when the webhook vanished while its destination was checked', async () => {
      queue.due = [work(1), work(2)];
      queue.deleted.add('wh_1');
      const w = worker();
      await run(w);
      await until(() => queue.records.length === 1 && queue.cancelled.length === 1, 'one cancel, one outcome');
      expect(queue.cancelled).toEqual([work(1).id]);
      expect(transport.sent.map((r) => r.deliveryId)).toEqual([work(2).id]);
      expect(queue.records[0].d.id).toBe(work(2).id);
    });

    it('cancels a claim of a disabled webhook without asking the transport, saying why', async () => {
      queue.due = [work(1, { webhook: { ...work(1).webhook!, disabled: true } }), work(2)];
      const w = worker();
      await run(w);
      await until(() => queue.cancelled.length === 1 && queue.records.length === 1, 'one cancel, one outcome');
      expect(queue.cancelReasons.get(work(1).id)).toBe('webhook_disabled');
      expect(transport.sent.map((r) => r.deliveryId)).toEqual([work(2).id]);
    });

    it.each([
      ['a claim of a webhook paused by hand, without asking the transport', () => (queue.due = [work(1, { webhook: { ...work(1).webhook!, disabled: true } }), work(2)])],
      [
        'a claim whose webhook was paused by hand between the claim and the send',
        () => {
          queue.due = [work(1), work(2)];
          // The claim read it enabled; the check right before the send finds it paused.
          queue.deleted.add(work(1).webhookId);
        },
      ],
    ])('holds %s, cancelling nothing', async (_, arrange) => {
      arrange();
      queue.paused.add(work(1).webhookId);
      const w = worker();
      await run(w);
      await until(() => queue.held.length === 1 && queue.records.length === 1, 'one hold, one outcome');
      expect(queue.held).toEqual([work(1).id]);
      expect(queue.cancelled).toEqual([]);
      expect(transport.sent.map((r) => r.deliveryId)).toEqual([work(2).id]);
    });

    it('cancels a claim whose webhook or event row is gone without asking the transport', async () => {
      queue.due = [work(1, { webhook: null }), work(2, { event: null })];
      const w = worker();
      await run(w);
      await until(() => queue.cancelled.length === 2, 'two cancels');
      expect(transport.inFlight + transport.sent.length).toBe(0);
      expect(queue.records).toEqual([]);
    });
  });

  describe('failure lifecycle', () => {
    const answerWith = (statusCode: number): SendOutcome => ({ kind: 'permanent', stage: 'after_response', errorClass: `http_${statusCode}`, statusCode, excerpt: null, retryAfterMs: null, durationMs: 3 });

    it('reports each recorded failure of the receiver, a 410 as gone, and neither a delivered attempt nor one without a send', async () => {
      transport.answer = (req) => (req.deliveryId === work(1).id ? answerWith(410) : req.deliveryId === work(2).id ? answerWith(500) : delivered());
      queue.due = [work(1), work(2), work(3)];
      const w = worker({ retryScheduleSeconds: [] });
      await run(w);
      await until(() => queue.records.length === 3 && failures.length === 2, 'three outcomes, two failures');
      expect(failures.sort((a, b) => a.webhookId.localeCompare(b.webhookId))).toEqual([
        { webhookId: 'wh_1', at: expect.any(Date), gone: true },
        { webhookId: 'wh_2', at: expect.any(Date), gone: false },
      ]);
    });

    it('a slow failure count does not hold the attempt: its retry, due meanwhile, is sent rather than skipped as still in flight', async () => {
      let release!: () => void;
      const slow = new Promise<void>((r) => (release = r));
      const counted: WebhookFailure[] = [];
      transport.answer = () => ({ kind: 'transient', stage: 'after_response', errorClass: 'http_500', statusCode: 500, excerpt: null, retryAfterMs: null, durationMs: 3 });
      queue.due = [work(1)];
      const w = worker({ retryScheduleSeconds: [5, 300] }, undefined, (f) => {
        counted.push(f);
        return slow;
      });
      try {
        await run(w);
        await until(() => queue.records.length === 1 && counted.length === 1, 'the first outcome, being counted');
        // The retry comes due while the count is still running (in production: a claim riding on another outcome batch).
        queue.due = [work(1, { attempts: 2 })];
        w.wake();
        await until(() => queue.records.length === 2, 'the retry sent and recorded while the first failure is still being counted');
        expect(queue.records.map((r) => r.rec.attempt.attemptNo)).toEqual([1, 2]);
      } finally {
        release();
      }
    });

    it('does not count an attempt whose stored secret could not be read (nothing was sent)', async () => {
      const broken = { decrypt: () => { throw new SecretDecryptionError('damaged'); } } as unknown as SecretBox;
      queue.due = [work(1)];
      const w = worker({}, broken);
      await run(w);
      await until(() => queue.records.length === 1, 'the outcome');
      expect(queue.records[0].rec.attempt.errorClass).toBe('secret_unreadable');
      expect(failures).toEqual([]);
    });
  });

  describe('retry policy → record', () => {
    async function recordOf(outcome: SendOutcome, attempts = 1): Promise<AttemptRecord> {
      queue.due = [work(1, { attempts })];
      transport.answer = () => outcome;
      const w = worker({ retryScheduleSeconds: [5, 300] });
      await run(w);
      await until(() => queue.records.length === 1, 'the outcome');
      return queue.records[0].rec;
    }

    it('a 2xx: delivered, no error, the attempt row as the transport measured it', async () => {
      expect(await recordOf(delivered())).toEqual({
        attempt: { attemptNo: 1, startedAt: clock.at, durationMs: 12, statusCode: 200, outcome: 'delivered', errorClass: null, responseExcerpt: 'ok' },
        state: 'delivered',
        nextAttemptAt: null,
        lastError: null,
        webhookStatus: 'delivered',
      });
    });

    it('a transient failure with attempts left: pending until the scheduled delay (or a longer Retry-After)', async () => {
      const rec = await recordOf({ kind: 'transient', stage: 'after_response', errorClass: 'http_503', statusCode: 503, excerpt: 'busy', retryAfterMs: 120_000, durationMs: 3 });
      expect(rec).toEqual({
        attempt: { attemptNo: 1, startedAt: clock.at, durationMs: 3, statusCode: 503, outcome: 'transient', errorClass: 'http_503', responseExcerpt: 'busy' },
        state: 'pending',
        nextAttemptAt: new Date(clock.at.getTime() + 120_000),
        lastError: 'http_503',
        webhookStatus: 'retrying',
      });
    });

    it('a transient failure on the schedule: the jittered delay of this attempt number', async () => {
      const rec = await recordOf({ kind: 'transient', stage: 'during', errorClass: 'timeout', statusCode: null, excerpt: 'TimeoutError: …', retryAfterMs: null, durationMs: 1 }, 2);
      expect(rec).toMatchObject({ state: 'pending', nextAttemptAt: new Date(clock.at.getTime() + 300_000), lastError: 'timeout', attempt: { attemptNo: 2 } });
    });

    it('a transient failure on the last attempt: failed', async () => {
      const last = await recordOf({ kind: 'transient', stage: 'during', errorClass: 'connection_reset', statusCode: null, excerpt: null, retryAfterMs: null, durationMs: 1 }, 3);
      expect(last).toMatchObject({ state: 'failed', nextAttemptAt: null, lastError: 'connection_reset', webhookStatus: 'failed' });
    });

    it('a permanent failure fails at once', async () => {
      const rec = await recordOf({ kind: 'permanent', stage: 'before_connect', errorClass: 'destination_blocked', statusCode: null, excerpt: 'refused', retryAfterMs: null, durationMs: 1 });
      expect(rec).toMatchObject({ state: 'failed', nextAttemptAt: null, lastError: 'destination_blocked', webhookStatus: 'failed', attempt: { outcome: 'permanent', errorClass: 'destination_blocked', responseExcerpt: 'refused' } });
    });
  });

  describe('a stored secret that does not decrypt', () => {
    const box = new SecretBox({ keys: [generateEncryptionKey()] }, {} as DataSource);
    const stored = (id: string, column: 'secret' | 'previous_secret', plain = `whsec_${id}_${column}`) => box.encrypt(plain, webhookSecretPlace(id, column));
    const hook = (n: number, secret: string, previousSecret: string | null = null) => ({ ...work(n).webhook!, secret, previousSecret, previousSecretExpiresAt: previousSecret ? new Date(clock.at.getTime() + 3_600_000) : null });

    it('fails that webhook alone: secret_unreadable, permanent, nothing sent, no internal message in the attempt', async () => {
      const tampered = stored('wh_1', 'secret').slice(0, -2) + 'xx';
      queue.due = [work(1, { webhook: hook(1, tampered) }), work(2, { webhook: hook(2, stored('wh_2', 'secret')) })];
      const w = worker({}, box);
      await run(w);
      await until(() => queue.records.length === 2, 'both outcomes');
      const rec = (n: number) => queue.records.find((r) => r.d.id === work(n).id)!.rec;
      expect(rec(1)).toMatchObject({ state: 'failed', nextAttemptAt: null, lastError: 'secret_unreadable', webhookStatus: 'failed', attempt: { outcome: 'permanent', errorClass: 'secret_unreadable', statusCode: null } });
      expect(rec(1).attempt.responseExcerpt).toMatch(/^this webhook's signing secret could not be read, so nothing was sent: rotate it \(POST \/v1\/webhooks\/wh_1\/rotate-secret\)/);
      expect(rec(1).attempt.responseExcerpt).not.toMatch(/key id|decrypt|altered|enc:/);
      expect(transport.sent.map((r) => r.destination.webhookId)).toEqual(['wh_2']);
      expect(rec(2).state).toBe('delivered');
    });

    it('also when the previous secret, still signing during a rotation, is one moved from the secret column', async () => {
      queue.due = [work(1, { webhook: hook(1, stored('wh_1', 'secret'), stored('wh_1', 'secret', 'whsec_old')) })];
      const w = worker({}, box);
      await run(w);
      await until(() => queue.records.length === 1, 'the outcome');
      expect(queue.records[0].rec).toMatchObject({ state: 'failed', lastError: 'secret_unreadable' });
      expect(transport.sent).toEqual([]);
    });

    it('signs with both secrets during a rotation when they decrypt, and ignores an expired previous one', async () => {
      let signedWith: string[] = [];
      transport.answer = (req) => {
        signedWith = req.secrets(clock.now());
        return delivered();
      };
      queue.due = [work(1, { webhook: hook(1, stored('wh_1', 'secret'), stored('wh_1', 'previous_secret')) })];
      const w = worker({}, box);
      await run(w);
      await until(() => queue.records.length === 1, 'the outcome');
      expect(signedWith).toEqual(['whsec_wh_1_secret', 'whsec_wh_1_previous_secret']);
      queue.due = [work(2, { webhook: { ...hook(2, stored('wh_2', 'secret'), 'enc:v2:gone:AAAA'), previousSecretExpiresAt: new Date(clock.at.getTime() - 1) } })];
      w.wake();
      await until(() => queue.records.length === 2, 'the second outcome');
      expect(queue.records[1].rec.state).toBe('delivered');
      expect(signedWith).toEqual(['whsec_wh_2_secret']);
    });
  });

  describe('worker_lost', () => {
    it('logs the attempt of the worker that died as worker_lost, then sends', async () => {
      const since = new Date(clock.at.getTime() - 90_000);
      queue.due = [work(1, { attempts: 2, lostSince: since })];
      const w = worker();
      await run(w);
      await until(() => queue.records.length === 1, 'the outcome');
      expect(queue.logged).toEqual([
        { deliveryId: work(1).id, attempt: expect.objectContaining({ attemptNo: 1, startedAt: since, durationMs: 90_000, statusCode: null, outcome: 'transient', errorClass: WORKER_LOST }) },
      ]);
      expect(transport.sent).toHaveLength(1);
      expect(queue.records[0].rec.attempt.attemptNo).toBe(2);
    });

    it('fails the delivery without a send when the lost attempt was the last the schedule allows', async () => {
      queue.due = [work(1, { attempts: 4, lostSince: new Date(clock.at.getTime() - 1000) })];
      const w = worker({ retryScheduleSeconds: [5, 300] });
      await run(w);
      await until(() => queue.records.length === 1, 'the failure');
      expect(transport.sent).toEqual([]);
      expect(queue.records[0].rec).toMatchObject({ state: 'failed', lastError: WORKER_LOST, webhookStatus: 'failed', attempt: { attemptNo: 3, errorClass: WORKER_LOST } });
    });
  });

  describe('lease renewal', () => {
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

    it('renews every held lease in one call per interval, from the clock, for attempts that outlast the lease, and stops when nothing is held', async () => {
      queue.due = [work(1), work(2)];
      transport.hold = true;
      // The attempt timeout (10 s) is far above the lease (300 ms): renewals carry the attempt.
      const w = worker({ leaseMs: 300, leaseRenewMs: 20, timeoutMs: 10_000 });
      await run(w);
      await until(() => transport.waiting === 2, 'two sends');
      await until(() => queue.renewals.length >= 2, 'two renewals');
      expect(queue.renewals[0]).toEqual({ owner: w.owner, ids: [work(1).id, work(2).id], leaseUntil: new Date(clock.at.getTime() + 300) });
      clock.at = new Date(clock.at.getTime() + 5000);
      const before = queue.renewals.length;
      await until(() => queue.renewals.length > before, 'a renewal after the clock moved');
      expect(queue.renewals.at(-1)).toEqual({ owner: w.owner, ids: [work(1).id, work(2).id], leaseUntil: new Date(clock.at.getTime() + 300) });

      transport.release(delivered(), 1);
      await until(() => w.inFlight === 1, 'the first outcome recorded');
      const afterFirst = queue.renewals.length;
      await until(() => queue.renewals.length > afterFirst, 'a renewal of what is left');
      expect(queue.renewals.at(-1)!.ids).toEqual([work(2).id]);

      transport.release();
      await until(() => w.inFlight === 0, 'all recorded');
      await sleep(30); // a renewal that had started may still land
      const idle = queue.renewals.length;
      await sleep(100);
      expect(queue.renewals.length).toBe(idle);
    });

    it('runs one renewal at a time', async () => {
      queue.due = [work(1)];
      transport.hold = true;
      let answer!: () => void;
      queue.holdRenewals = new Promise((r) => (answer = r));
      const w = worker({ leaseMs: 300, leaseRenewMs: 10 });
      await run(w);
      await until(() => queue.renewals.length === 1, 'the first renewal');
      await sleep(80);
      expect(queue.renewals).toHaveLength(1);
      answer();
      await until(() => queue.renewals.length >= 2, 'the next renewal once the first answered');
    });

    it('tries again at the next tick after a failed renewal, and the attempt still records its outcome', async () => {
      queue.due = [work(1)];
      transport.hold = true;
      queue.renewError = new Error('database unreachable');
      const w = worker({ leaseMs: 300, leaseRenewMs: 20 });
      await run(w);
      await until(() => queue.renewals.length >= 2, 'a renewal after the failed one');
      transport.release();
      await until(() => queue.records.length === 1, 'the outcome');
      expect(queue.records[0].d.id).toBe(work(1).id);
    });

    it('keeps renewing while a stopping worker waits for its attempts, and stops before giving back the leases still in flight', async () => {
      queue.due = [work(1)];
      transport.hold = true;
      const w = worker({ leaseMs: 300, leaseRenewMs: 10, timeoutMs: 60 });
      await run(w);
      await until(() => transport.waiting === 1, 'the send');
      const stopping = w.onModuleDestroy();
      const atStop = queue.renewals.length;
      await stopping;
      expect(queue.renewals.length).toBeGreaterThan(atStop); // the wait (60 ms + 1 s) outlasts several intervals
      expect(queue.calls.at(-1)).toBe('release:in_flight');
      await sleep(50);
      expect(queue.calls.at(-1)).toBe('release:in_flight');
    });

    it('does not send again, nor log as lost, a delivery its own claim took back after its lease lapsed mid-attempt', async () => {
      queue.due = [work(1)];
      transport.hold = true;
      const w = worker({ concurrency: 2, batchSize: 2 });
      await run(w);
      await until(() => transport.waiting === 1, 'the send');
      // The event loop was blocked past the lease: this worker's next claim finds its own row expired.
      queue.due = [work(1, { attempts: 2, lostSince: clock.now() }), work(2)];
      w.wake();
      await until(() => transport.sent.length === 2, 'the other delivery sent');
      expect(transport.sent.map((r) => r.deliveryId)).toEqual([work(1).id, work(2).id]);
      expect(queue.logged).toEqual([]);
      transport.release();
      await until(() => queue.records.length === 2, 'both outcomes');
      expect(queue.records.map((r) => [r.d.id, r.rec.attempt.attemptNo])).toEqual([
        [work(1).id, 1],
        [work(2).id, 1],
      ]);
      await until(() => w.inFlight === 0, 'all slots free');
    });

    it('accepts a lease shorter than the attempt timeout, and refuses a renewal interval above half the lease', () => {
      expect(resolveDeliveryOptions({})).toMatchObject({ leaseMs: 3000, leaseRenewMs: 1000, timeoutMs: 10_000 });
      expect(resolveDeliveryOptions({ leaseMs: 2000, timeoutMs: 30_000 })).toMatchObject({ leaseMs: 2000, leaseRenewMs: 666 });
      expect(() => resolveDeliveryOptions({ leaseMs: 3000, leaseRenewMs: 1501 })).toThrow(/at most half the lease/);
      expect(() => resolveDeliveryOptions({ leaseMs: 3000, leaseRenewMs: 0 })).toThrow(/must be positive/);
    });
  });

  describe('stop', () => {
    it('gives back deliveries claimed by an outcome write that answers while stopping, unstarted', async () => {
      queue.due = [work(1), work(2), work(3)];
      transport.hold = true;
      const w = worker({ concurrency: 2, batchSize: 2 });
      await run(w);
      await until(() => transport.waiting === 2, 'two sends');
      let answer!: () => void;
      queue.holdRecords = new Promise((r) => (answer = r));
      transport.release();
      await until(() => queue.batches.length === 1, 'the outcome write');
      const stopped = w.onModuleDestroy();
      answer();
      await stopped;
      expect(queue.released).toEqual([{ ids: [work(3).id], what: 'unstarted' }]);
      expect(transport.sent).toHaveLength(2);
    });

    it('lets attempts finish within the timeout, then gives back the leases of those still in flight', async () => {
      queue.due = [work(1), work(2)];
      transport.hold = true;
      const w = worker({ timeoutMs: 50, leaseMs: 1000 });
      await run(w);
      await until(() => transport.waiting === 2, 'two sends');
      const stopped = w.onModuleDestroy();
      transport.release(delivered(), 1);
      await stopped;
      expect(queue.records.map((r) => r.d.id)).toEqual([work(1).id]);
      expect(queue.released).toEqual([{ ids: [work(2).id], what: 'in_flight' }]);
    });

    it('claims nothing once stopped', async () => {
      const w = worker();
      await run(w);
      await until(() => queue.claims.length === 1, 'the first claim');
      await w.onModuleDestroy();
      queue.due = [work(1)];
      w.wake();
      await new Promise((r) => setTimeout(r, 10));
      expect(queue.claims).toHaveLength(1);
      expect(transport.sent).toEqual([]);
    });
  });
});
