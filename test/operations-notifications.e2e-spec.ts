import { Webhook as StandardWebhook } from 'standardwebhooks';
import { PrivateDestinationsService } from '../src/auth/private-destinations.service';
import { EventsService } from '../src/delivery/events.service';
import type { Role } from '../src/app.module';
import { generateWebhookSecret } from '../src/delivery/secret';
import { testDatabases, type TestDatabase } from './support/databases';
import { ShiftedClock, startTestApp, TestApp } from './support/app';
import { makeCert, Receiver, TestCert } from './support/receiver';
import { spawnServe, stopProcess, type ServeProcess } from './support/processes';
import { until } from './support/until';

const HOUR = 3600_000;

/** The operators' notification goes to its own receiver; deliveries are retried after 0.5 s. */
const env = (cert: TestCert, ops: Receiver, opsSecret: string) => ({
  DELIVERY_CA_FILE: cert.caFile,
  DELIVERY_RETRY_SCHEDULE: '0.5,0.5,0.5,0.5',
  DELIVERY_POLL_INTERVAL_MS: '50',
  DELIVERY_TIMEOUT_MS: '1000',
  OPERATIONS_WEBHOOK_URL: ops.url('/ops'),
  OPERATIONS_WEBHOOK_SECRET: opsSecret,
});

interface Notice {
  type: string;
  timestamp: string;
  data: { id: string; customer_id: string; reason: string; disabled_at: string; folded?: { count: number; first_disabled_at: string; gone: number; failing: number } };
}

describe.each(testDatabases())('operations notifications on %s', (_name, makeDb) => {
  let cert: TestCert;
  let rx: Receiver;
  let ops: Receiver;
  const opsSecret = generateWebhookSecret();
  const clock = new ShiftedClock();
  /** The operators' receiver answers this; the notifications it acknowledged are kept, verified on arrival, in `acked`. */
  let answer = 200;
  const acked: (Notice & { id: string })[] = [];
  const opened: TestApp[] = [];
  const workers: ServeProcess[] = [];
  const dbs: TestDatabase[] = [];

  beforeAll(async () => {
    cert = makeCert();
    rx = await Receiver.start(cert);
    ops = await Receiver.start(cert);
    // Every webhook of this suite is gone.
    rx.behaviour = () => ({ status: 410 });
    ops.behaviour = (r) => {
      if (answer === 200) acked.push({ id: r.headers['webhook-id'] as string, ...verified(r.body, r.headers as Record<string, string>) });
      return { status: answer };
    };
  });
  afterAll(async () => {
    await Promise.all(workers.map(stopProcess));
    for (const t of opened) await t.app.close().catch(() => undefined);
    for (const db of dbs) await db.drop();
    await rx?.close();
    await ops?.close();
  });

  /** An app on `db` (a fresh database when absent), left to afterAll to close, its database too. */
  async function start(db?: TestDatabase, role?: Role): Promise<TestApp> {
    const target = db ?? makeDb();
    // An existing database is dropped by the test that created it.
    if (!db) dbs.push(target);
    const t = await startTestApp(target, { env: env(cert, ops, opsSecret), clock, role });
    opened.push(t);
    return t;
  }

  /** `byAddress`: the receiver's 127.0.0.1 URL, for a spawned process (it cannot resolve the test's names). */
  async function subscribe(t: TestApp, byAddress = false) {
    const c = await t.customer();
    await t.app.get(PrivateDestinationsService).allow(c.customerId, `127.0.0.1/32:${rx.port}`);
    const subreddit = `sub${Math.random().toString(36).slice(2, 12)}`;
    const res = await t.http().post('/v1/webhooks').set(c.auth).send({ url: byAddress ? rx.url(`/${subreddit}`) : rx.namedUrl(`/${subreddit}`), event: 'trends.surge', subreddit, allow_nonstandard_port: true });
    expect(res.status).toBe(201);
    return { c, id: res.body.data.id as string, subreddit };
  }

  /** One "410 → disabled" turn: an event whose delivery is answered 410, until the webhook is disabled. */
  async function disableOnce(t: TestApp, s: { c: { auth: Record<string, string> }; id: string; subreddit: string }) {
    await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit: s.subreddit, data: { count: 1 } });
    await until(
      async () => (await t.http().get(`/v1/webhooks/${s.id}`).set(s.c.auth)).body.data?.disabled,
      (d) => d === true,
      15_000,
      `webhook ${s.id} disabled`,
    );
  }

  /** The operators' notifications about this webhook that were acknowledged. */
  const notices = (webhookId: string) => acked.filter((n) => n.data.id === webhookId);
  /** Verified at the app's clock (moved ahead here): the notifier signs at it. */
  const verified = (body: string, headers: Record<string, string>): Notice => {
    const spy = jest.spyOn(Date, 'now').mockReturnValue(clock.now().getTime());
    try {
      return new StandardWebhook(opsSecret).verify(body, headers) as Notice;
    } finally {
      spy.mockRestore();
    }
  };

  it('30 cycles of 410 → disabled → enabled send one notification, then one summary an hour later that accounts for all 30', async () => {
    answer = 200;
    const t = await start();
    const s = await subscribe(t);
    for (let i = 0; i < 30; i++) {
      await disableOnce(t, s);
      expect((await t.http().patch(`/v1/webhooks/${s.id}`).set(s.c.auth).send({ disabled: false })).status).toBe(200);
    }
    // The first goes out at once; the rest wait for the webhook's next hour, however long we wait.
    await until(() => Promise.resolve(notices(s.id).length), (n) => n >= 1, 10_000, 'the first notification');
    await new Promise((r) => setTimeout(r, 2_000));
    const first = notices(s.id);
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ type: 'webhook.disabled', data: { id: s.id, customer_id: s.c.customerId, reason: 'gone' } });

    clock.offsetMs += HOUR;
    // The slow timer (5 s) finds the summary due.
    await until(() => Promise.resolve(notices(s.id).length), (n) => n === 2, 15_000, 'the summary');
    const [a, b] = notices(s.id);
    expect(b.id).not.toBe(a.id);
    // The summary reports the latest disable and counts those folded into it; together, all 30.
    expect(b.data).toMatchObject({ id: s.id, reason: 'gone', folded: { count: expect.any(Number), gone: expect.any(Number), failing: 0 } });
    expect(b.data.folded!.gone).toBe(b.data.folded!.count);
    expect(1 + (a.data.folded?.count ?? 0) + 1 + b.data.folded!.count).toBe(30);
    expect(Date.parse(b.data.folded!.first_disabled_at)).toBeGreaterThan(Date.parse(a.data.disabled_at));
    await new Promise((r) => setTimeout(r, 1_000));
    expect(notices(s.id)).toHaveLength(2);
  });

  it('a notification refused with 503 by the operators is sent under the same webhook-id by the worker process that replaces the stopped one', async () => {
    // Spawned processes sign at the system's time.
    clock.offsetMs = 0;
    answer = 503;
    const t = await start(undefined, 'api');
    const s = await subscribe(t, true);
    const opsEnv = { OPERATIONS_WEBHOOK_URL: ops.url('/ops'), OPERATIONS_WEBHOOK_SECRET: opsSecret, DELIVERY_RETRY_SCHEDULE: '2,2,2,2' };
    const first = spawnServe(t, cert, opsEnv);
    workers.push(first);
    await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit: s.subreddit, data: { count: 1 } });
    const about = (x: { body: string }) => (JSON.parse(x.body) as Notice).data.id === s.id;
    await ops.waitUntil((r) => r.some(about), 20_000).catch((err) => {
      throw new Error(`${(err as Error).message}\n${first.output.join('')}`);
    });
    const refused = ops.received.find(about)!;
    await stopProcess(first);
    expect(notices(s.id)).toEqual([]);
    answer = 200;
    workers.push(spawnServe(t, cert, opsEnv));
    await until(() => Promise.resolve(notices(s.id).length), (n) => n === 1, 30_000, 'the notification sent by the new process');
    const [sent] = notices(s.id);
    expect(sent.id).toBe(refused.headers['webhook-id']);
    expect(sent.data).toMatchObject({ id: s.id, customer_id: s.c.customerId, reason: 'gone' });
  });
});
