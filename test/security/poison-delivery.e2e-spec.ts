import type { ChildProcess } from 'node:child_process';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EventsService } from '../../src/delivery/events.service';
import { testDatabases } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';
import { makeCert, Receiver, sleep, TestCert } from '../support/receiver';
import { pollUntil, ServeProcess, spawnServe, stopProcess } from '../support/processes';

// Three attempts (two delays). The lease (3 s) is how long a dead worker's delivery waits before it
// is due again. The attempt timeout is long: a poison attempt ends with its worker 300 ms in, and a
// fresh worker's first TLS connection on a loaded runner can take over a second, which with
// spawnServe's 1 s timeout made one attempt a timeout that never reached the receiver (a red CI run).
const WORKER_ENV = { DELIVERY_RETRY_SCHEDULE: '0.2,0.4', DELIVERY_TIMEOUT_MS: '10000', DELIVERY_LEASE_MS: '3000' };
const MAX_ATTEMPTS = 3;
const OTHERS = 20;

/**
 * A delivery that kills its worker (issue #12): the receiver SIGKILLs the worker process while
 * the poison delivery's request is in flight, and a supervisor (this test) starts a new worker
 * each time, as a process manager would. Before attempts were charged at claim, the poison
 * delivery stayed `delivering` with 0 attempts and killed every worker that claimed it, forever.
 */
describe.each(testDatabases())('a delivery that kills its worker, on %s', (name, makeDb) => {
  let t: TestApp;
  let cert: TestCert;
  let rx: Receiver;
  let ds: DataSource;
  const workers: ChildProcess[] = [];
  let current: ServeProcess | undefined;
  let supervising = false;
  let deaths = 0;
  const selfExits: string[] = [];

  beforeAll(async () => {
    cert = makeCert();
    t = await startTestApp(makeDb(), { role: 'api', env: { SSRF_ALLOW_CIDRS: '127.0.0.1/32' } });
    ds = t.app.get<DataSource>(getDataSourceToken());
    rx = await Receiver.start(cert);
  });
  afterAll(async () => {
    supervising = false;
    await Promise.all(workers.map(stopProcess));
    await rx?.close();
    await t?.close();
  });

  const q = (sql: string) => (name === 'postgres' ? sql.replace(/\?/g, (() => { let i = 0; return () => `$${++i}`; })()) : sql);

  function startWorker(): void {
    const w = spawnServe(t, cert, WORKER_ENV);
    workers.push(w);
    current = w;
    w.once('exit', (code, signal) => {
      if (signal === 'SIGKILL') deaths++;
      if (signal !== 'SIGKILL' && signal !== 'SIGTERM' && code !== 0) selfExits.push(`exit ${code}: ${w.output.join('').slice(-2000)}`);
      if (supervising && current === w && selfExits.length === 0) startWorker();
    });
  }

  async function webhook(path: string, subreddit: string): Promise<{ id: string; auth: { Authorization: string } }> {
    const c = await t.customer();
    const res = await t.http().post('/v1/webhooks').set(c.auth).send({ url: rx.url(path), event: 'trends.rising', subreddit, allow_nonstandard_port: true });
    expect(res.status).toBe(201);
    return { id: res.body.data.id as string, auth: c.auth };
  }

  async function deliveriesOf(webhookId: string) {
    return (await ds.query(q('SELECT id, state, attempts, last_error FROM deliveries WHERE webhook_id = ? ORDER BY id'), [webhookId])) as {
      id: string;
      state: string;
      attempts: number | string;
      last_error: string | null;
    }[];
  }

  it('ends failed after the schedule, one worker death per attempt, while the other deliveries are delivered', async () => {
    const tag = Math.random().toString(36).slice(2, 8);
    const { id: poisonHook, auth } = await webhook('/poison', `poison${tag}`);
    const { id: okHook } = await webhook('/ok', `fine${tag}`);
    rx.behaviour = (r) => {
      if (r.path !== '/poison') return { status: 200 };
      // The attempt kills its worker mid-request. A short pause first lets the worker commit the
      // outcomes of the other deliveries it is sending at the same moment.
      const victim = current;
      setTimeout(() => victim?.kill('SIGKILL'), 300);
      return { hang: true };
    };
    const events = t.app.get(EventsService);
    await events.emit({ type: 'trends.rising', subreddit: `poison${tag}`, data: { poison: true } });
    for (let i = 0; i < OTHERS / 2; i++) await events.emit({ type: 'trends.rising', subreddit: `fine${tag}`, data: { i } });

    const t0 = Date.now();
    supervising = true;
    startWorker();
    // More of the others arrive while the poison one keeps killing workers.
    await rx.waitUntil((r) => r.some((x) => x.path === '/poison'), 30_000, 'the first poison attempt').catch((e: Error) => {
      throw new Error(`${e.message}\n${selfExits.join('\n')}\nworker output:\n${current?.output.join('').slice(-2000)}`);
    });
    for (let i = OTHERS / 2; i < OTHERS; i++) await events.emit({ type: 'trends.rising', subreddit: `fine${tag}`, data: { i } });

    const [poison] = await pollUntil(() => deliveriesOf(poisonHook), (rows) => rows[0]?.state === 'failed', 60_000);
    const others = await pollUntil(() => deliveriesOf(okHook), (rows) => rows.length === OTHERS && rows.every((d) => d.state === 'delivered'), 15_000);
    supervising = false;
    const seconds = (Date.now() - t0) / 1000;

    expect(selfExits).toEqual([]);
    expect(poison).toMatchObject({ state: 'failed', last_error: 'worker_lost' });
    expect(Number(poison.attempts)).toBe(MAX_ATTEMPTS);
    // The log says what happened: one worker_lost row per death, numbered like the attempts.
    // (Checked first: when an attempt ended otherwise, its row says how.)
    const log = (await ds.query(q('SELECT attempt_no, outcome, error_class, status_code FROM delivery_attempts WHERE delivery_id = ? ORDER BY attempt_no'), [poison.id])) as {
      attempt_no: number;
    }[];
    expect(log.map((a) => ({ ...a, attempt_no: Number(a.attempt_no) }))).toEqual(
      [1, 2, 3].map((n) => ({ attempt_no: n, outcome: 'transient', error_class: 'worker_lost', status_code: null })),
    );
    // Every attempt reached the receiver and killed a worker; none was made after the schedule ran out.
    const poisonArrivals = rx.received.filter((x) => x.path === '/poison');
    expect(poisonArrivals).toHaveLength(MAX_ATTEMPTS);
    expect(new Set(poisonArrivals.map((x) => x.headers['webhook-id']))).toEqual(new Set([poison.id]));
    expect(deaths).toBe(MAX_ATTEMPTS);
    // The API shows the same to the webhook's owner.
    const api = await t.http().get(`/v1/webhooks/${poisonHook}/deliveries`).set(auth);
    expect(api.status).toBe(200);
    expect(api.body.data).toEqual([
      expect.objectContaining({ id: poison.id, state: 'failed', attempt_count: MAX_ATTEMPTS, last_error: 'worker_lost', next_attempt_at: null }),
    ]);
    expect(api.body.data[0].attempts.map((a: { attempt: number; error_class: string }) => [a.attempt, a.error_class])).toEqual([
      [1, 'worker_lost'],
      [2, 'worker_lost'],
      [3, 'worker_lost'],
    ]);
    expect(others.map((d) => d.state)).toEqual(new Array(OTHERS).fill('delivered'));
    expect(new Set(rx.received.filter((x) => x.path === '/ok').map((x) => x.headers['webhook-id']))).toEqual(new Set(others.map((d) => d.id)));
    console.log(`poison/${name}: ${deaths} worker deaths, poison failed after ${MAX_ATTEMPTS} attempts, ${OTHERS} others delivered, ${seconds.toFixed(1)} s`);

    // The last worker stays up and idle: the poison delivery is not claimed again.
    const last = current!;
    const arrivals = rx.received.length;
    await sleep(3000);
    expect(last.exitCode).toBeNull();
    expect(last.signalCode).toBeNull();
    expect(rx.received.length).toBe(arrivals);
    await stopProcess(last);
  }, 110_000);
});
