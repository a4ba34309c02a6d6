import type { ChildProcess } from 'node:child_process';
import { CIRCUIT_REFRESH_MS } from '../src/delivery/circuit/destination-circuit-breaker';
import { EventsService } from '../src/delivery/events.service';
import { testDatabases } from './support/databases';
import { startTestApp, TestApp } from './support/app';
import { spawnServe, stopProcess } from './support/processes';
import { makeCert, Receiver, sleep, TestCert } from './support/receiver';

/**
 * The circuit breaker per customer and destination, through the real worker and a real HTTPS
 * receiver that accepts each request and never answers (until it recovers): the customer's
 * circuit for that host and port opens and shows on its webhook, no attempt goes there while it
 * is open (the deliveries wait uncharged), the recovered receiver closes it and the deliveries put
 * off arrive with their webhook-id; another customer's webhook at the same host and port stays
 * closed and keeps delivering.
 */
const FAILURES = 3; // throttled after 3 timeouts in a row, open after 6
const PAUSE_MS = 5000;
const LEASE_MS = 30_000;
/** The recovered receiver answers the probe after this: the other deliveries meet the half-open circuit meanwhile. */
const PROBE_ANSWER_MS = 500;
const CIRCUIT_ENV = {
  DELIVERY_TIMEOUT_MS: '1000',
  // Two attempts, the second 3 s after the first: it comes due while the circuit is open. (1 s
  // raced the opening: a retry could go out before a second worker process had reloaded the open
  // circuit, time out, and end its delivery `failed`.)
  DELIVERY_RETRY_SCHEDULE: '3',
  DELIVERY_CIRCUIT_FAILURES: String(FAILURES),
  DELIVERY_CIRCUIT_THROTTLE: '2',
  DELIVERY_CIRCUIT_PAUSE_MS: String(PAUSE_MS),
  // A long lease makes the half-open probe's deadline (attempt timeout + lease) 31 s: the
  // deliveries put off behind the probe must arrive once it answers, not at that deadline.
  DELIVERY_LEASE_MS: String(LEASE_MS),
};

// The worker in the test's own process; or two worker processes beside an API-only one, which
// share the circuit through the database (each reloads it every second).
const MODES = ['one process', 'two worker processes'] as const;
const CASES = testDatabases().flatMap(([name, makeDb]) => MODES.map((mode) => [`${name}, ${mode}`, makeDb, mode] as const));

describe.each(CASES)('circuit breaker on %s', (_name, makeDb, mode) => {
  let t: TestApp;
  let cert: TestCert;
  let receiver: Receiver;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    cert = makeCert();
    t = await startTestApp(makeDb(), {
      env: { SSRF_ALLOW_CIDRS: '127.0.0.1/32', DELIVERY_CA_FILE: cert.caFile, ...CIRCUIT_ENV },
      random: () => 0.5,
      role: mode === 'one process' ? 'all' : 'api',
    });
    receiver = await Receiver.start(cert);
    receiver.behaviour = (req) => (req.path.startsWith('/a/') ? { hang: true } : { status: 200 });
    if (mode === 'two worker processes') {
      workers.push(spawnServe(t, cert, CIRCUIT_ENV), spawnServe(t, cert, CIRCUIT_ENV));
      await sleep(2000); // both up (and LISTENing on PostgreSQL)
    }
  });
  afterAll(async () => {
    await Promise.all(workers.map(stopProcess));
    await receiver?.close();
    await t?.close();
  });

  async function webhook(auth: Record<string, string>, path: string, subreddit: string): Promise<string> {
    const res = await t.http().post('/v1/webhooks').set(auth).send({ url: receiver.url(path), event: 'trends.surge', subreddit, allow_nonstandard_port: true });
    expect(res.status).toBe(201);
    expect(res.body.data.circuit).toEqual({ state: 'closed', until: null, consecutive_failures: 0 });
    return res.body.data.id as string;
  }

  async function circuit(auth: Record<string, string>, id: string): Promise<{ state: string; until: string | null; consecutive_failures: number }> {
    const res = await t.http().get(`/v1/webhooks/${id}`).set(auth);
    expect(res.status).toBe(200);
    return res.body.data.circuit;
  }

  async function deliveries(auth: Record<string, string>, id: string): Promise<{ id: string; state: string; attempt_count: number; attempts: { error_class: string | null }[] }[]> {
    const res = await t.http().get(`/v1/webhooks/${id}/deliveries`).set(auth);
    expect(res.status).toBe(200);
    return res.body.data;
  }

  async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms: number, what: string): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await read();
      if (ok(v)) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
      await sleep(100);
    }
  }

  it("opens one customer's circuit for a hanging host, sends nothing there while open, delivers what waited once it answers again, and leaves another customer at the same host alone", async () => {
    const suffix = Math.random().toString(36).slice(2, 10);
    const [subA, subB] = [`cba${suffix}`, `cbb${suffix}`];
    const a = await t.customer('business');
    const b = await t.customer('business');
    const hooksA: string[] = [];
    for (let i = 0; i < 2 * FAILURES; i++) hooksA.push(await webhook(a.auth, `/a/${i}`, subA));
    const hookB = await webhook(b.auth, '/b', subB);
    const events = t.app.get(EventsService);

    // Six deliveries that all hang for the attempt timeout: six failures in a row open the circuit.
    await events.emit({ type: 'trends.surge', subreddit: subA, data: { n: 1 } });
    const open = await eventually(() => circuit(a.auth, hooksA[0]), (c) => c.state === 'open', 10_000, "a's circuit open");
    expect(open.consecutive_failures).toBeGreaterThanOrEqual(2 * FAILURES);
    const until = Date.parse(open.until!);
    expect(until).toBeGreaterThan(Date.now());
    // Every webhook of hers at that host and port shows the same circuit; b's at the same host does not.
    expect(await circuit(a.auth, hooksA[2 * FAILURES - 1])).toEqual(open);
    expect(await circuit(b.auth, hookB)).toEqual({ state: 'closed', until: null, consecutive_failures: 0 });
    // Every worker has reloaded the circuits since it opened.
    await sleep(CIRCUIT_REFRESH_MS + 200);

    // While it is open: b's deliveries to the same host and port go out at once; none of a's do.
    const sentToA = () => receiver.received.filter((r) => r.path.startsWith('/a/')).length;
    const before = sentToA();
    await events.emit({ type: 'trends.surge', subreddit: subA, data: { n: 2 } });
    const t0 = Date.now();
    await events.emit({ type: 'trends.surge', subreddit: subB, data: { n: 2 } });
    await receiver.waitUntil((r) => r.some((x) => x.path === '/b'), 5000, "b's delivery");
    expect(receiver.received.find((x) => x.path === '/b')!.at - t0).toBeLessThan(3000);
    // Wait until shortly before the pause ends (the first attempts' retries came due meanwhile too).
    await sleep(Math.max(0, until - Date.now() - 500));
    expect(sentToA()).toBe(before);
    expect(await circuit(b.auth, hookB)).toMatchObject({ state: 'closed' });
    // What waited was not charged an attempt: the new deliveries have none, the first ones only their timeout.
    const waiting = (await Promise.all(hooksA.map((id) => deliveries(a.auth, id)))).flat();
    expect(waiting).toHaveLength(4 * FAILURES);
    for (const d of waiting) {
      expect(d.state).toBe('pending');
      expect(d.attempts.map((x) => x.error_class)).toEqual(d.attempt_count === 0 ? [] : ['timeout']);
    }
    // (More than the new ones when a first attempt found the circuit already throttled on a loaded machine.)
    expect(waiting.filter((d) => d.attempt_count === 0).length).toBeGreaterThanOrEqual(2 * FAILURES);

    // The receiver recovers: after the pause one probe closes the circuit, and everything that waited
    // arrives within about two seconds of its answer (a worker that put deliveries off behind the
    // probe sees the circuit close by its own write or its next reload), not at the probe's deadline.
    let answered = 0;
    receiver.behaviour = (req) => (req.path.startsWith('/a/') && answered++ === 0 ? { status: 200, delayMs: PROBE_ANSWER_MS } : { status: 200 });
    const recovered = (r: typeof receiver.received) => r.filter((x) => x.path.startsWith('/a/') && x.at > t0);
    await receiver.waitUntil((r) => new Set(recovered(r).map((x) => x.headers['webhook-id'])).size === 4 * FAILURES, 20_000, "a's deferred deliveries");
    const [probe, ...rest] = recovered(receiver.received);
    expect(probe.at).toBeGreaterThanOrEqual(until);
    const afterProbe = Math.max(...rest.map((x) => x.at)) - (probe.at + PROBE_ANSWER_MS);
    expect(afterProbe).toBeLessThan(2500);
    expect(await circuit(a.auth, hooksA[0])).toEqual({ state: 'closed', until: null, consecutive_failures: 0 });
    // The receiver has them all; their worker may still be writing the last outcomes.
    const done = await eventually(async () => (await Promise.all(hooksA.map((id) => deliveries(a.auth, id)))).flat(), (ds) => ds.every((d) => d.state === 'delivered'), 5000, 'the outcomes recorded');
    // Brought forward, none went out twice.
    expect(recovered(receiver.received)).toHaveLength(4 * FAILURES);
    const arrived = new Set(receiver.received.filter((x) => x.path.startsWith('/a/')).map((x) => x.headers['webhook-id']));
    for (const d of done) {
      expect(d.state).toBe('delivered');
      expect(arrived.has(d.id)).toBe(true);
      // One attempt per send: nothing was charged for the wait.
      expect(d.attempts.map((x) => x.error_class)).toEqual(d.attempt_count === 1 ? [null] : ['timeout', null]);
    }
    expect(await circuit(b.auth, hookB)).toEqual({ state: 'closed', until: null, consecutive_failures: 0 });
  }, 60_000);
});
