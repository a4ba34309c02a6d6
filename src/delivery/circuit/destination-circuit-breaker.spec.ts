import type { Clock } from '../../common/clock';
import type { SendOutcome } from '../transport/delivery-transport';
import { CircuitDeferral, CircuitTicket, DestinationCircuitBreaker } from './destination-circuit-breaker';
import type { DestinationCircuitStore } from './destination-circuit.store';
import { InMemoryCircuitStore } from './in-memory-circuit.store.fake';

class FakeClock implements Clock {
  at = new Date('2026-01-02T03:04:05.000Z');
  now(): Date {
    return new Date(this.at.getTime());
  }
  advance(ms: number): void {
    this.at = new Date(this.at.getTime() + ms);
  }
}

const TIMEOUT: SendOutcome = { kind: 'transient', stage: 'during', errorClass: 'timeout', statusCode: null, excerpt: null, retryAfterMs: null, durationMs: 1000 };
const HTTP_500: SendOutcome = { kind: 'transient', stage: 'after_response', errorClass: 'http_500', statusCode: 500, excerpt: null, retryAfterMs: null, durationMs: 5 };
const OK: SendOutcome = { kind: 'delivered', statusCode: 200, excerpt: null, durationMs: 5 };

const hook = (customerId: string, n = 1) => ({ id: `wh_${customerId}_${n}`, customerId, url: `https://hooks.test:8443/in/${n}` });
const settled = () => new Promise((r) => setImmediate(r));

describe('DestinationCircuitBreaker', () => {
  let clock: FakeClock;
  let store: InMemoryCircuitStore;

  function breaker(): DestinationCircuitBreaker {
    return new DestinationCircuitBreaker(store as unknown as DestinationCircuitStore, clock, {
      timeoutMs: 1000,
      leaseMs: 3000,
      circuit: { failures: 2, throttle: 1, pauseMs: 10_000, maxPauseMs: 60_000 },
    });
  }

  async function admitted(b: DestinationCircuitBreaker, w = hook('cus_a')): Promise<CircuitTicket> {
    const t = await b.admit(w);
    if ('until' in t) throw new Error(`deferred until ${t.until.toISOString()}`);
    return t;
  }

  /** `n` attempts that each end with `outcome`, one after another. */
  async function attempts(b: DestinationCircuitBreaker, n: number, outcome: SendOutcome, w = hook('cus_a')): Promise<void> {
    for (let i = 0; i < n; i++) {
      b.settle(await admitted(b, w), outcome);
      await settled();
    }
  }

  beforeEach(() => {
    clock = new FakeClock();
    store = new InMemoryCircuitStore();
  });

  it('writes nothing for a healthy destination, nor for quick HTTP errors, which reset the count', async () => {
    const b = breaker();
    await attempts(b, 20, OK);
    expect(store.writes).toBe(0);
    await attempts(b, 1, TIMEOUT);
    expect(store.rows.size).toBe(1);
    await attempts(b, 1, HTTP_500);
    expect(store.rows.size).toBe(0);
    await attempts(b, 5, HTTP_500);
    expect(store.writes).toBe(2);
  });

  it("throttles, then opens on one customer's failures, and never touches another customer's circuit at the same host and port", async () => {
    const b = breaker();
    await attempts(b, 2, TIMEOUT);
    expect(b.cached('cus_a', 'hooks.test:8443')).toMatchObject({ state: 'throttled', consecutiveFailures: 2 });
    // Throttled to one attempt in flight: the second is put off by the attempt timeout.
    const first = await admitted(b);
    expect(await b.admit(hook('cus_a', 2))).toEqual({ until: new Date(clock.at.getTime() + 1000) });
    // Customer b at the same destination is not throttled.
    const theirs = [await admitted(b, hook('cus_b')), await admitted(b, hook('cus_b', 2))];
    b.settle(first, TIMEOUT);
    await settled();
    await attempts(b, 1, TIMEOUT);
    const open = store.rows.get('cus_a\nhooks.test:8443')!;
    expect(open).toMatchObject({ state: 'open', consecutiveFailures: 4, openCount: 1, openedUntil: new Date(clock.at.getTime() + 10_000) });
    expect(await b.admit(hook('cus_a', 3))).toEqual({ until: open.openedUntil });
    expect(await admitted(b, hook('cus_b', 3))).toMatchObject({ probe: false });
    for (const t of theirs) b.settle(t, OK);
    await settled();
    expect(store.rows.has('cus_b\nhooks.test:8443')).toBe(false);
  });

  it('gives the one probe to one worker of several once the pause is over; its answer closes the circuit', async () => {
    const [one, two] = [breaker(), breaker()];
    await attempts(one, 4, TIMEOUT);
    await two.refresh();
    expect(two.cached('cus_a', 'hooks.test:8443')).toMatchObject({ state: 'open' });
    clock.advance(10_000);
    const answers = await Promise.all([one.admit(hook('cus_a', 1)), two.admit(hook('cus_a', 2)), one.admit(hook('cus_a', 3)), two.admit(hook('cus_a', 4))]);
    const probes = answers.filter((a): a is CircuitTicket => 'probe' in a && a.probe);
    expect(probes).toHaveLength(1);
    const deadline = new Date(clock.at.getTime() + 1000 + 3000);
    const behindProbe = 'cus_a\nhooks.test:8443';
    expect(answers.filter((a) => 'until' in a)).toEqual([{ until: deadline, behindProbe }, { until: deadline, behindProbe }, { until: deadline, behindProbe }]);
    expect(store.rows.get('cus_a\nhooks.test:8443')).toMatchObject({ state: 'half_open', openedUntil: deadline });
    const owner = answers.indexOf(probes[0]) % 2 === 0 ? one : two;
    owner.settle(probes[0], OK);
    await settled();
    expect(store.rows.size).toBe(0);
    const other = owner === one ? two : one;
    await other.refresh();
    expect(other.cached('cus_a', 'hooks.test:8443')).toBeNull();
    expect(await admitted(other)).toMatchObject({ probe: false });
  });

  it('hands the deliveries put off behind the probe back once it answers: at once in its worker, at the next reload in another', async () => {
    const [one, two] = [breaker(), breaker()];
    const back: { worker: string; id: string; until: Date }[] = [];
    one.onProbeAnswered((ds) => back.push(...ds.map((d) => ({ worker: 'one', ...d }))));
    two.onProbeAnswered((ds) => back.push(...ds.map((d) => ({ worker: 'two', ...d }))));
    await attempts(one, 4, TIMEOUT);
    await two.refresh();
    clock.advance(10_000);
    const probe = await admitted(one);
    expect(probe.probe).toBe(true);
    const deadline = new Date(clock.at.getTime() + 1000 + 3000);
    // Put off behind it in both workers (the other one reloads the half-open row first).
    await two.refresh();
    const [a, b] = [(await one.admit(hook('cus_a', 2))) as CircuitDeferral, (await two.admit(hook('cus_a', 3))) as CircuitDeferral];
    expect([a, b]).toEqual([{ until: deadline, behindProbe: 'cus_a\nhooks.test:8443' }, { until: deadline, behindProbe: 'cus_a\nhooks.test:8443' }]);
    one.park(a, 'msg_2');
    two.park(b, 'msg_3');
    expect([one.parkedCount, two.parkedCount]).toEqual([1, 1]);
    // Every further attempt there waits behind the probe too.
    expect(await one.admit(hook('cus_a', 4))).toMatchObject({ behindProbe: expect.any(String) });

    clock.advance(200); // the probe answers after 200 ms, long before its deadline
    one.settle(probe, OK);
    await settled();
    expect(back).toEqual([{ worker: 'one', id: 'msg_2', until: deadline }]);
    await two.refresh();
    expect(back).toEqual([
      { worker: 'one', id: 'msg_2', until: deadline },
      { worker: 'two', id: 'msg_3', until: deadline },
    ]);
    expect([one.parkedCount, two.parkedCount]).toEqual([0, 0]);
    // Parked after the circuit closed (its give-back was slow): handed back at once.
    one.park({ until: deadline, behindProbe: 'cus_a\nhooks.test:8443' }, 'msg_5');
    expect(back.at(-1)).toEqual({ worker: 'one', id: 'msg_5', until: deadline });
    // A healthy destination: no row, nothing parked, no write.
    const writes = store.writes;
    await attempts(one, 10, OK);
    expect([store.writes, store.rows.size, one.parkedCount]).toEqual([writes, 0, 0]);
  });

  it('leaves the deliveries behind a probe that fails to its deadline, and forgets those whose deadline passed', async () => {
    const b = breaker();
    const back: string[] = [];
    b.onProbeAnswered((ds) => back.push(...ds.map((d) => d.id)));
    await attempts(b, 4, TIMEOUT);
    clock.advance(10_000);
    const probe = await admitted(b);
    b.park((await b.admit(hook('cus_a', 2))) as CircuitDeferral, 'msg_2');
    b.settle(probe, TIMEOUT);
    await settled();
    expect(store.rows.get('cus_a\nhooks.test:8443')).toMatchObject({ state: 'open', openCount: 2 });
    expect([back, b.parkedCount]).toEqual([[], 0]);
    // The next probe never reports: what waited behind it is due at its deadline anyway.
    clock.advance(20_000);
    expect(await admitted(b)).toMatchObject({ probe: true });
    b.park((await b.admit(hook('cus_a', 3))) as CircuitDeferral, 'msg_3');
    expect(b.parkedCount).toBe(1);
    clock.advance(4000);
    await b.refresh();
    expect([back, b.parkedCount]).toEqual([[], 0]);
  });

  it('reopens for twice as long when the probe fails, and lets another probe go when a probe never reports', async () => {
    const b = breaker();
    await attempts(b, 4, TIMEOUT);
    clock.advance(10_000);
    const probe = await admitted(b);
    expect(probe.probe).toBe(true);
    b.settle(probe, TIMEOUT);
    await settled();
    expect(store.rows.get('cus_a\nhooks.test:8443')).toMatchObject({ state: 'open', openCount: 2, openedUntil: new Date(clock.at.getTime() + 20_000) });
    clock.advance(20_000);
    const lost = await admitted(b);
    expect(lost.probe).toBe(true);
    // Its worker died: nothing settles it. After its deadline (timeout + lease) another probe may go.
    const fresh = breaker();
    await fresh.refresh();
    clock.advance(3999);
    expect('until' in (await fresh.admit(hook('cus_a', 2)))).toBe(true);
    clock.advance(1);
    expect(await fresh.admit(hook('cus_a', 2))).toMatchObject({ probe: true });
  });

  it('writes a burst of failures that end together as few compare-and-set writes, and loses none to another worker writing meanwhile', async () => {
    const [one, two] = [breaker(), breaker()];
    const tickets = await Promise.all(Array.from({ length: 30 }, (_, i) => one.admit(hook('cus_a', i))));
    const other = await two.admit(hook('cus_a', 99));
    for (const t of tickets) one.settle(t as CircuitTicket, TIMEOUT);
    two.settle(other as CircuitTicket, TIMEOUT);
    for (let i = 0; i < 5; i++) await settled();
    expect(store.writes).toBeLessThanOrEqual(4);
    expect(store.rows.get('cus_a\nhooks.test:8443')).toMatchObject({ state: 'open', consecutiveFailures: 31 });
  });

  it('is a pass-through when switched off (failures 0)', async () => {
    const b = new DestinationCircuitBreaker(store as unknown as DestinationCircuitStore, clock, { circuit: { failures: 0 } });
    for (let i = 0; i < 50; i++) b.settle((await b.admit(hook('cus_a'))) as CircuitTicket, TIMEOUT);
    await settled();
    expect(store.writes).toBe(0);
    const t = (await b.admit(hook('cus_a'))) as CircuitTicket | CircuitDeferral;
    expect('until' in t).toBe(false);
  });
});
