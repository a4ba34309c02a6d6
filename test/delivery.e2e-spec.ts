import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { EventsService } from '../src/delivery/events.service';
import { testTargets } from './support/databases';
import { startTestApp, TestApp } from './support/app';
import { makeCert, Receiver, Received, sleep, TestCert } from './support/receiver';

const MSG_ID = /^msg_[0-9a-hjkmnp-tv-z]{26}$/;

/** Scaled-down schedule so a whole retry history takes about a second. */
const ENV = (cert: TestCert) => ({
  SSRF_ALLOW_CIDRS: '127.0.0.1/32',
  DELIVERY_CA_FILE: cert.caFile,
  DELIVERY_RETRY_SCHEDULE: '0.2,0.4,0.8',
  DELIVERY_POLL_INTERVAL_MS: '50',
  DELIVERY_TIMEOUT_MS: '1000',
  DELIVERY_LEASE_MS: '7000',
});

function verifyBoth(secret: string, r: Received): unknown {
  const headers = {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  };
  const a = new StandardWebhook(secret).verify(r.body, headers);
  const svixHeaders = { 'svix-id': headers['webhook-id'], 'svix-timestamp': headers['webhook-timestamp'], 'svix-signature': headers['webhook-signature'] };
  const b = new SvixWebhook(secret).verify(r.body, svixHeaders);
  expect(b).toEqual(a);
  return a;
}

// Express on every database; fastify on SQLite (its routes and bodies differ, the queue does not).
const TARGETS = [...testTargets(['express']), ...testTargets(['fastify']).filter(([name]) => name.startsWith('sqlite'))];

describe.each(TARGETS)('deliveries on %s', (_name, makeDb, adapter) => {
  let t: TestApp;
  let cert: TestCert;
  let rx: Receiver;

  beforeAll(async () => {
    cert = makeCert();
    t = await startTestApp(makeDb(), { adapter, env: ENV(cert) });
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    rx = await Receiver.start(cert);
  });
  afterEach(async () => {
    await rx.close();
  });

  /** A fresh customer with one webhook on a subreddit of its own, pointed at the receiver. */
  async function subscribe(opts: { url?: string; event?: string } = {}) {
    const c = await t.customer();
    const subreddit = `sub${Math.random().toString(36).slice(2, 12)}`;
    const res = await t
      .http()
      .post('/v1/webhooks')
      .set(c.auth)
      .send({ url: opts.url ?? rx.namedUrl(), event: opts.event ?? 'trends.surge', subreddit, allow_nonstandard_port: true });
    expect(res.status).toBe(201);
    return { c, w: res.body.data as { id: string; secret: string; subreddit: string }, subreddit };
  }

  const emit = (subreddit: string, data: Record<string, unknown> = { count: 42 }, type = 'trends.surge', id?: string) =>
    t.app.get(EventsService).emit({ id, type, subreddit, data });

  async function deliveriesOf(c: { auth: Record<string, string> }, webhookId: string) {
    const res = await t.http().get(`/v1/webhooks/${webhookId}/deliveries`).set(c.auth);
    expect(res.status).toBe(200);
    return res.body.data as any[];
  }

  async function until<T>(fn: () => Promise<T>, pred: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await fn();
      if (pred(v)) return v;
      if (Date.now() > end) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(v).slice(0, 500)}`);
      await sleep(50);
    }
  }

  it('delivers a signed event that standardwebhooks and svix both verify, and records it', async () => {
    const { c, w, subreddit } = await subscribe();
    const res = await emit(subreddit, { count: 42, baseline: 7.5 });
    expect(res).toEqual({ event_id: expect.stringMatching(/^evt_/), created: true, deliveries: 1 });
    await rx.waitForCount(1);
    const r = rx.received[0];
    expect(r.headers['webhook-id']).toMatch(MSG_ID);
    expect(r.headers['content-type']).toBe('application/json');
    expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    const payload = verifyBoth(w.secret, r) as any;
    expect(payload).toEqual({
      type: 'trends.surge',
      timestamp: expect.stringMatching(/Z$/),
      data: { event_id: res.event_id, webhook_id: w.id, subreddit, count: 42, baseline: 7.5 },
    });
    expect(() => new StandardWebhook(w.secret).verify(r.body.replace('42', '43'), r.headers as any)).toThrow();

    const ds = await until(() => deliveriesOf(c, w.id), (d) => d[0]?.state === 'delivered');
    expect(ds[0]).toMatchObject({ id: r.headers['webhook-id'], event_id: res.event_id, attempt_count: 1, last_response_code: 200 });
    expect(ds[0].attempts).toEqual([expect.objectContaining({ attempt: 1, status_code: 200, outcome: 'delivered', error_class: null, response_excerpt: 'ok' })]);
    const hook = (await t.http().get(`/v1/webhooks/${w.id}`).set(c.auth)).body.data;
    expect(hook).toMatchObject({ last_status: 'delivered', last_response_code: 200, last_delivery_at: expect.any(String) });
  });

  it('retries 503, 503, 200: three attempts, one id, growing delays', async () => {
    const { c, w, subreddit } = await subscribe();
    rx.behaviour = (r) => ({ status: r.n < 3 ? 503 : 200 });
    await emit(subreddit);
    await rx.waitForCount(3);
    const ids = new Set(rx.received.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    const gaps = [rx.received[1].at - rx.received[0].at, rx.received[2].at - rx.received[1].at];
    expect(gaps[0]).toBeGreaterThanOrEqual(150);
    expect(gaps[1]).toBeGreaterThan(gaps[0]);
    for (const r of rx.received) verifyBoth(w.secret, r);
    const [d] = await until(() => deliveriesOf(c, w.id), (d) => d[0]?.state === 'delivered');
    expect(d.attempts.map((a: any) => [a.status_code, a.outcome, a.error_class])).toEqual([
      [503, 'transient', 'http_503'],
      [503, 'transient', 'http_503'],
      [200, 'delivered', null],
    ]);
    // One warn line per failed attempt, for operators: ids, attempt, class, next attempt; no secret.
    const warned = failedAttemptLogs(d.id);
    expect(warned).toEqual([
      { msg: 'delivery attempt failed', webhook_id: w.id, delivery_id: d.id, attempt: 1, error_class: 'http_503', status_code: 503, next_attempt_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), final_state: null },
      { msg: 'delivery attempt failed', webhook_id: w.id, delivery_id: d.id, attempt: 2, error_class: 'http_503', status_code: 503, next_attempt_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), final_state: null },
    ]);
    expect(t.logs.lines.join('\n')).not.toContain(w.secret.slice('whsec_'.length));
  });

  /** The worker's `delivery attempt failed` warn lines of one delivery, as logged (Nest logger: object, context). */
  function failedAttemptLogs(deliveryId: string): Record<string, unknown>[] {
    return t.logs.lines
      .filter((l) => l.startsWith('warn {') && l.includes(deliveryId))
      .map((l) => JSON.parse(l.slice('warn '.length, l.lastIndexOf('}') + 1)) as Record<string, unknown>)
      .filter((o) => o.msg === 'delivery attempt failed');
  }

  it('gives up at once on a 400, marking the delivery and the webhook failed', async () => {
    const { c, w, subreddit } = await subscribe();
    rx.behaviour = () => ({ status: 400, body: 'bad payload' });
    await emit(subreddit);
    const [d] = await until(() => deliveriesOf(c, w.id), (d) => d[0]?.state === 'failed');
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0]).toMatchObject({ status_code: 400, outcome: 'permanent', error_class: 'http_400', response_excerpt: 'bad payload' });
    expect(failedAttemptLogs(d.id)).toEqual([
      { msg: 'delivery attempt failed', webhook_id: w.id, delivery_id: d.id, attempt: 1, error_class: 'http_400', status_code: 400, next_attempt_at: null, final_state: 'failed' },
    ]);
    await sleep(500);
    expect(rx.received).toHaveLength(1);
    expect((await t.http().get(`/v1/webhooks/${w.id}`).set(c.auth)).body.data).toMatchObject({ last_status: 'failed', last_response_code: 400 });
  });

  it('never follows a redirect, not even to an internal address', async () => {
    const { c, w, subreddit } = await subscribe();
    rx.behaviour = (r) => (r.path === '/hook' ? { status: 302, headers: { location: rx.url('/internal-admin') } } : { status: 200 });
    await emit(subreddit);
    const [d] = await until(() => deliveriesOf(c, w.id), (d) => d[0]?.state === 'failed');
    expect(d.attempts[0]).toMatchObject({ status_code: 302, error_class: 'redirect_302' });
    await sleep(300);
    expect(rx.received.map((r) => r.path)).toEqual(['/hook']);
  });

  it('times out a hanging receiver and retries', async () => {
    const { c, w, subreddit } = await subscribe();
    rx.behaviour = (r) => (r.n === 1 ? { hang: true } : { status: 204 });
    await emit(subreddit);
    const [d] = await until(() => deliveriesOf(c, w.id), (d) => d[0]?.state === 'delivered', 15_000);
    expect(d.attempts.map((a: any) => a.error_class)).toEqual(['timeout', null]);
    expect(d.attempts[0].duration_ms).toBeGreaterThanOrEqual(900);
    expect(new Set(rx.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
  });

  it('honours Retry-After on a 429', async () => {
    const { c, w, subreddit } = await subscribe();
    rx.behaviour = (r) => (r.n === 1 ? { status: 429, headers: { 'retry-after': '2' } } : { status: 200 });
    await emit(subreddit);
    await rx.waitForCount(2, 10_000);
    expect(rx.received[1].at - rx.received[0].at).toBeGreaterThanOrEqual(1900);
    await until(() => deliveriesOf(c, w.id), (d) => d[0]?.state === 'delivered');
  });

  it('refuses a host that rebinds to an internal address after creation, as a permanent failure', async () => {
    const { c, w, subreddit } = await subscribe({ url: 'https://rebind.example.com/hook' });
    t.dns.set('rebind.example.com', ['127.0.0.2']);
    try {
      await emit(subreddit);
      const [d] = await until(() => deliveriesOf(c, w.id), (d) => d[0]?.state === 'failed');
      expect(d.attempts).toHaveLength(1);
      expect(d.attempts[0]).toMatchObject({ status_code: null, outcome: 'permanent', error_class: 'destination_blocked' });
      expect(d.attempts[0].response_excerpt).toContain('127.0.0.2');
    } finally {
      t.dns.set('rebind.example.com', ['93.184.216.34']);
    }
  });

  it('fans an event out once: emitting the same event id again creates nothing', async () => {
    const { subreddit } = await subscribe();
    await subscribe(); // another subreddit: not a subscriber
    const id = `evt_replay_${Date.now()}`;
    expect((await emit(subreddit, {}, 'trends.surge', id)).deliveries).toBe(1);
    expect(await emit(subreddit, {}, 'trends.surge', id)).toEqual({ event_id: id, created: false, deliveries: 0 });
    expect((await emit(subreddit, {}, 'trends.velocity')).deliveries).toBe(0);
    await rx.waitForCount(1);
    await sleep(300);
    expect(rx.received).toHaveLength(1);
  });

  it('stops a webhook\'s pending deliveries when it is deleted', async () => {
    const { c, w, subreddit } = await subscribe();
    rx.behaviour = () => ({ status: 503 });
    await emit(subreddit);
    await rx.waitForCount(1);
    expect((await t.http().delete(`/v1/webhooks/${w.id}`).set(c.auth)).status).toBe(204);
    const after = rx.received.length;
    await sleep(1500); // the schedule would have made two more attempts by now
    expect(rx.received.length).toBe(after);
  });

  it("sends a test event of the webhook's own kind to that webhook only on POST /test, marked test: true", async () => {
    const { c, w, subreddit } = await subscribe({ event: 'trends.rising' });
    // Another customer's webhook on the same subscription gets no delivery of it (deliveries are written with the event).
    const other = await t.customer();
    const otherHook = await t.http().post('/v1/webhooks').set(other.auth).send({ url: rx.namedUrl('/other'), event: 'trends.rising', subreddit, allow_nonstandard_port: true });
    expect(otherHook.status).toBe(201);
    const res = await t.http().post(`/v1/webhooks/${w.id}/test`).set(c.auth);
    expect(res.status).toBe(202);
    expect(res.body.data).toEqual({ event_id: expect.stringMatching(/^evt_test_/), delivery_id: expect.stringMatching(MSG_ID) });
    await rx.waitForCount(1);
    expect(rx.received[0].headers['webhook-id']).toBe(res.body.data.delivery_id);
    const body = verifyBoth(w.secret, rx.received[0]) as { type: string; data: Record<string, unknown> };
    expect(body.type).toBe('trends.rising');
    expect(body.data).toMatchObject({ event_id: res.body.data.event_id, webhook_id: w.id, subreddit, test: true });
    expect(await deliveriesOf(other, otherHook.body.data.id)).toEqual([]);
    expect((await deliveriesOf(c, w.id)).map((d) => [d.id, d.event_id])).toEqual([[res.body.data.delivery_id, res.body.data.event_id]]);
  });

  it('marks no real event as a test', async () => {
    const { w, subreddit } = await subscribe();
    await emit(subreddit);
    await rx.waitForCount(1);
    expect((verifyBoth(w.secret, rx.received[0]) as { data: Record<string, unknown> }).data).not.toHaveProperty('test');
  });

  it('signs with both secrets for a day after a rotation', async () => {
    const { c, w } = await subscribe();
    const rot = await t.http().post(`/v1/webhooks/${w.id}/rotate-secret`).set(c.auth);
    expect(rot.status).toBe(200);
    const fresh = rot.body.data.secret as string;
    expect(fresh).not.toBe(w.secret);
    expect((await t.http().get(`/v1/webhooks/${w.id}`).set(c.auth)).body.data.secret).toBeUndefined();
    await t.http().post(`/v1/webhooks/${w.id}/test`).set(c.auth);
    await rx.waitForCount(1);
    expect(String(rx.received[0].headers['webhook-signature']).split(' ')).toHaveLength(2);
    verifyBoth(fresh, rx.received[0]);
    verifyBoth(w.secret, rx.received[0]);
  });

  it('re-sends a failed delivery on POST retry, with the same id', async () => {
    const { c, w, subreddit } = await subscribe();
    // 400, not 410: a 410 disables the webhook (webhook-lifecycle.e2e-spec.ts), and a retry of it is refused.
    rx.behaviour = (r) => ({ status: r.n === 1 ? 400 : 200 });
    await emit(subreddit);
    const [d] = await until(() => deliveriesOf(c, w.id), (d) => d[0]?.state === 'failed');
    const res = await t.http().post(`/v1/webhooks/${w.id}/deliveries/${d.id}/retry`).set(c.auth);
    expect(res.status).toBe(202);
    await rx.waitForCount(2);
    expect(rx.received[1].headers['webhook-id']).toBe(d.id);
    const [after] = await until(() => deliveriesOf(c, w.id), (x) => x[0]?.state === 'delivered');
    expect(after.attempts).toHaveLength(2);
  });

  it('answers 400 to a delivery id that can never exist and 404 to a well-formed unknown one', async () => {
    const { c, w } = await subscribe();
    // i, l, o and u are not in the alphabet delivery ids are written in, whatever the case.
    for (const bad of ['msg_uuuuuuuuuuuuuuuuuuuuuuuuuu', 'msg_0123456789abcdefghjkmnpqri', 'MSG_0123456789ABCDEFGHJKMNPQRO', 'msg_0123', 'evt_0123456789abcdefghjkmnpqrs']) {
      const res = await t.http().post(`/v1/webhooks/${w.id}/deliveries/${bad}/retry`).set(c.auth);
      expect([bad, res.status, res.body.error.code]).toEqual([bad, 400, 'VALIDATION_ERROR']);
      expect(res.body.error.message).toContain('delivery_id');
    }
    for (const unknown of ['msg_0123456789abcdefghjkmnpqrs', 'MSG_0123456789ABCDEFGHJKMNPQRS']) {
      const res = await t.http().post(`/v1/webhooks/${w.id}/deliveries/${unknown}/retry`).set(c.auth);
      expect([unknown, res.status, res.body.error.code]).toEqual([unknown, 404, 'NOT_FOUND']);
    }
  });

  it('keeps the delivery routes to the webhook\'s owner', async () => {
    const { w } = await subscribe();
    const other = await t.customer();
    for (const res of [
      await t.http().get(`/v1/webhooks/${w.id}/deliveries`).set(other.auth),
      await t.http().post(`/v1/webhooks/${w.id}/test`).set(other.auth),
      await t.http().post(`/v1/webhooks/${w.id}/rotate-secret`).set(other.auth),
      await t.http().post(`/v1/webhooks/${w.id}/deliveries/msg_00000000000000000000000000/retry`).set(other.auth),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    const free = await t.customer('free');
    expect((await t.http().get(`/v1/webhooks/${w.id}/deliveries`).set(free.auth)).body.error.code).toBe('PLAN_REQUIRED');
  });
});
