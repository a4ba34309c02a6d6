import { Webhook as StandardWebhook } from 'standardwebhooks';
import { PrivateDestinationsService } from '../src/auth/private-destinations.service';
import { deliveryId } from '../src/delivery/delivery-id';
import { EventsService } from '../src/delivery/events.service';
import { DeliveryQueue } from '../src/delivery/queue/delivery-queue';
import { generateWebhookSecret } from '../src/delivery/secret';
import { Metrics } from '../src/metrics/metrics.service';
import { testDatabases } from './support/databases';
import { ShiftedClock, startTestApp, TestApp } from './support/app';
import { makeCert, Receiver, sleep, TestCert } from './support/receiver';

const HOUR = 3600_000;
const DAY = 24 * HOUR;

/**
 * Scaled-down retries; no SSRF_ALLOW_CIDRS: the local receiver is reached through each customer's
 * private-destination grant, so a customer without one is refused it. The operators' notification
 * goes to a second receiver.
 */
const env = (cert: TestCert, ops: Receiver, opsSecret: string) => ({
  DELIVERY_CA_FILE: cert.caFile,
  DELIVERY_RETRY_SCHEDULE: '0.1,0.2',
  DELIVERY_POLL_INTERVAL_MS: '50',
  DELIVERY_TIMEOUT_MS: '1000',
  DELIVERY_LEASE_MS: '7000',
  OPERATIONS_WEBHOOK_URL: ops.url('/ops'),
  OPERATIONS_WEBHOOK_SECRET: opsSecret,
});

interface Webhook {
  id: string;
  created_at: string;
  url: string;
  allow_nonstandard_port: boolean;
  disabled: boolean;
  disabled_reason: string | null;
  disabled_at: string | null;
}

interface Delivery {
  id: string;
  state: string;
  next_attempt_at: string | null;
  last_error: string | null;
}

function expectError(res: { status: number; body: any; headers: Record<string, string> }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
  expect(Object.keys(res.body)).toEqual(['error']);
}

describe.each(testDatabases())('webhook failure lifecycle on %s', (_name, makeDb) => {
  let t: TestApp;
  let cert: TestCert;
  let rx: Receiver;
  let ops: Receiver;
  const opsSecret = generateWebhookSecret();
  // Only ever moved forward: attempts in flight never see time run backwards.
  const clock = new ShiftedClock();
  /** The receiver's answer per path (200 when not listed). */
  const answers = new Map<string, { status: number; headers?: Record<string, string> }>();

  beforeAll(async () => {
    cert = makeCert();
    rx = await Receiver.start(cert);
    ops = await Receiver.start(cert);
    rx.behaviour = (r) => answers.get(r.path) ?? { status: 200 };
    t = await startTestApp(makeDb(), { env: env(cert, ops, opsSecret), clock });
  });
  afterAll(async () => {
    await rx?.close();
    await ops?.close();
    await t?.close();
  });

  let n = 0;
  /** A fresh customer (allowed the local receiver unless `granted` is false) and a webhook of its own subreddit at `path`. */
  async function subscribe(path = `/w${n++}`, granted = true) {
    const c = await t.customer();
    if (granted) await t.app.get(PrivateDestinationsService).allow(c.customerId, `127.0.0.1/32:${rx.port}`);
    const subreddit = `sub${Math.random().toString(36).slice(2, 12)}`;
    const res = await t.http().post('/v1/webhooks').set(c.auth).send({ url: rx.namedUrl(path), event: 'trends.surge', subreddit, allow_nonstandard_port: true });
    expect(res.status).toBe(201);
    return { c, w: res.body.data as Webhook, subreddit, path };
  }

  const emit = (subreddit: string) => t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { count: 1 } });

  async function get(c: { auth: Record<string, string> }, id: string): Promise<Webhook> {
    const res = await t.http().get(`/v1/webhooks/${id}`).set(c.auth);
    expect(res.status).toBe(200);
    return res.body.data as Webhook;
  }

  const patch = (c: { auth: Record<string, string> }, id: string, body: unknown) => t.http().patch(`/v1/webhooks/${id}`).set(c.auth).send(body as object);

  async function delivery(c: { auth: Record<string, string> }, webhookId: string, id: string): Promise<Delivery | undefined> {
    const res = await t.http().get(`/v1/webhooks/${webhookId}/deliveries`).query({ limit: '100' }).set(c.auth);
    expect(res.status).toBe(200);
    return (res.body.data as Delivery[]).find((d) => d.id === id);
  }

  async function until<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await read();
      if (done(v)) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
      await sleep(50);
    }
  }

  /** Emits one event now (the clock's now) and waits until its delivery has ended in `state`. */
  async function settled(s: { c: { auth: Record<string, string> }; w: Webhook; subreddit: string }, state: string): Promise<Delivery> {
    const { event_id } = await emit(s.subreddit);
    const id = deliveryId(event_id, s.w.id);
    return until(`delivery ${id} ${state}`, () => delivery(s.c, s.w.id, id), (d) => d?.state === state) as Promise<Delivery>;
  }

  describe('PATCH /v1/webhooks/{id}', () => {
    it('pauses: no delivery while paused, test events refused; resuming delivers again', async () => {
      const s = await subscribe();
      await settled(s, 'delivered');

      const paused = await patch(s.c, s.w.id, { disabled: true });
      expect(paused.status).toBe(200);
      expect(paused.headers['x-request-id']).toBe(paused.body.meta.request_id);
      expect(paused.body.data).toMatchObject({ id: s.w.id, disabled: true, disabled_reason: 'manual', disabled_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/) });
      expect(paused.body.data.secret).toBeUndefined();
      expect(await get(s.c, s.w.id)).toEqual(paused.body.data);
      const listed = await t.http().get('/v1/webhooks').set(s.c.auth);
      expect(listed.body.data[0]).toMatchObject({ id: s.w.id, disabled: true, disabled_reason: 'manual', disabled_at: paused.body.data.disabled_at });

      // The event is recorded, but the paused webhook gets no delivery.
      const skipped = await emit(s.subreddit);
      expect(skipped).toMatchObject({ created: true, deliveries: 0 });
      expectError(await t.http().post(`/v1/webhooks/${s.w.id}/test`).set(s.c.auth), 409, 'WEBHOOK_DISABLED');

      const resumed = await patch(s.c, s.w.id, { disabled: false });
      expect(resumed.status).toBe(200);
      expect(resumed.body.data).toMatchObject({ disabled: false, disabled_reason: null, disabled_at: null });
      await settled(s, 'delivered');
      const received = rx.received.filter((r) => r.path === s.path).map((r) => JSON.parse(r.body).data.event_id as string);
      expect(received).not.toContain(skipped.event_id);
      expect(received).toHaveLength(2);
    });

    it('pausing holds the pending deliveries: none is sent while paused, and resuming delivers them', async () => {
      const s = await subscribe();
      // A 503 with Retry-After: 2 s: each delivery waits, pending, for an attempt due within the pause.
      answers.set(s.path, { status: 503, headers: { 'retry-after': '2' } });
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const { event_id } = await emit(s.subreddit);
        ids.push(deliveryId(event_id, s.w.id));
        await until('a pending retry', () => delivery(s.c, s.w.id, ids[i]), (d) => d?.state === 'pending' && d.last_error === 'http_503');
      }
      const paused = await patch(s.c, s.w.id, { disabled: true });
      expect(paused.body.data).toMatchObject({ disabled: true, disabled_reason: 'manual', disabled_deliveries: 'held', resumed: null });
      for (const id of ids) expect(await delivery(s.c, s.w.id, id)).toMatchObject({ state: 'held', next_attempt_at: null, last_error: 'http_503' });
      const held = await t.http().get(`/v1/webhooks/${s.w.id}/deliveries`).query({ state: 'held' }).set(s.c.auth);
      expect((held.body.data as Delivery[]).map((d) => d.id).sort()).toEqual([...ids].sort());
      // The receiver is back, and both retries fall due: while paused, nothing reaches it.
      answers.delete(s.path);
      const sent = rx.received.filter((r) => r.path === s.path).length;
      await sleep(3000);
      expect(rx.received.filter((r) => r.path === s.path)).toHaveLength(sent);
      for (const id of ids) expect(await delivery(s.c, s.w.id, id)).toMatchObject({ state: 'held' });
      expectError(await t.http().post(`/v1/webhooks/${s.w.id}/deliveries/${ids[0]}/retry`).set(s.c.auth), 409, 'WEBHOOK_DISABLED');
      // An event of the pause gets no delivery: the resume answer offers to recover it, counted.
      await emit(s.subreddit);

      const resumed = await patch(s.c, s.w.id, { disabled: false });
      expect(resumed.status).toBe(200);
      expect(resumed.body.data).toMatchObject({
        disabled: false,
        disabled_deliveries: null,
        resumed: { released: 2, expired: 0, recover: { since: paused.body.data.disabled_at, until: expect.any(String), queued: 1, next_since: null } },
      });
      for (const id of ids) await until(`${id} delivered`, () => delivery(s.c, s.w.id, id), (d) => d?.state === 'delivered');
      // Each reached the receiver once more, after the resume.
      const after = rx.received.filter((r) => r.path === s.path).slice(sent).map((r) => r.headers['webhook-id']);
      expect(after.sort()).toEqual([...ids].sort());
      // Only this PATCH says what resuming did.
      expect((await get(s.c, s.w.id)) as unknown).toMatchObject({ resumed: null });
    });

    it('deleting a paused webhook cancels what it held', async () => {
      const s = await subscribe();
      answers.set(s.path, { status: 503, headers: { 'retry-after': '3600' } });
      const { event_id } = await emit(s.subreddit);
      const id = deliveryId(event_id, s.w.id);
      await until('a pending retry', () => delivery(s.c, s.w.id, id), (d) => d?.state === 'pending');
      expect((await patch(s.c, s.w.id, { disabled: true })).status).toBe(200);
      expect(await delivery(s.c, s.w.id, id)).toMatchObject({ state: 'held' });
      expect((await t.http().delete(`/v1/webhooks/${s.w.id}`).set(s.c.auth)).status).toBe(204);
      const q = t.app.get(DeliveryQueue);
      expect(await q.findForWebhook(s.w.id, id)).toMatchObject({ state: 'cancelled', lastError: 'webhook_deleted' });
    });

    it('takes concurrent PATCHes, beside other writes, without an error: each answers the webhook it left', async () => {
      const s = await subscribe();
      const others = await Promise.all([subscribe(), subscribe()]);
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, i) => {
          const w = [s, ...others][i % 3];
          if (i % 4 === 3) return t.http().post(`/v1/webhooks/${w.w.id}/rotate-secret`).set(w.c.auth);
          return patch(w.c, w.w.id, i % 2 === 0 ? { disabled: true } : { disabled: false, allow_nonstandard_port: true });
        }),
      );
      expect(answers.map((r) => `${r.status} ${r.status === 200 ? '' : r.text}`)).toEqual(answers.map(() => '200 '));
      for (const w of [s, ...others]) {
        const now = await get(w.c, w.w.id);
        expect(now.disabled).toBe(now.disabled_at !== null);
        expect(now.disabled_reason).toBe(now.disabled ? 'manual' : null);
      }
    });

    it('refuses bad bodies and other customers\' webhooks with the error envelope', async () => {
      const s = await subscribe();
      const other = await t.customer();
      expectError(await patch(s.c, s.w.id, {}), 400, 'VALIDATION_ERROR');
      const unknown = await patch(s.c, s.w.id, { disabled: true, event: 'trends.rising' });
      expectError(unknown, 400, 'VALIDATION_ERROR');
      expect(unknown.body.error.message).toContain('event');
      expectError(await patch(s.c, s.w.id, { disabled: 'yes' }), 400, 'VALIDATION_ERROR');
      expectError(await patch(s.c, s.w.id, { url: null }), 400, 'VALIDATION_ERROR');
      expectError(await patch(s.c, s.w.id, { url: 'http://example.com/' }), 400, 'VALIDATION_ERROR');
      expectError(await t.http().patch(`/v1/webhooks/${s.w.id}`).set(s.c.auth).set('content-type', 'text/plain').send('{"disabled":true}'), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expectError(await t.http().patch(`/v1/webhooks/${s.w.id}`).set(s.c.auth).set('content-type', 'application/json').send('{"disabled":'), 400, 'INVALID_JSON');
      expectError(await patch(other, s.w.id, { disabled: true }), 404, 'NOT_FOUND');
      expectError(await patch(s.c, 'not-a-ulid', { disabled: true }), 400, 'VALIDATION_ERROR');
      expect(await get(s.c, s.w.id)).toMatchObject({ disabled: false, url: s.w.url });
    });

    it('checks a new URL against the SSRF policy as create does', async () => {
      // Created on a public address; this customer has no grant for the local receiver.
      const c = await t.customer();
      const created = await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/a', event: 'trends.surge', subreddit: 'typescript' });
      expect(created.status).toBe(201);
      const id = created.body.data.id as string;
      const local = await patch(c, id, { url: rx.namedUrl('/x'), allow_nonstandard_port: true });
      expectError(local, 422, 'WEBHOOK_DESTINATION_BLOCKED');
      expect(local.body.error.message).toContain('127.0.0.1');
      const internal = await patch(c, id, { url: 'https://internal.example.com/' });
      expectError(internal, 422, 'WEBHOOK_DESTINATION_BLOCKED');
      expect(internal.body.error.message).toContain('10.0.0.5');
      expectError(await patch(c, id, { url: 'https://hooks.example.com:8443/' }), 422, 'WEBHOOK_DESTINATION_BLOCKED');
      expect(await get(c, id)).toMatchObject({ url: 'https://hooks.example.com/a', allow_nonstandard_port: false });

      // Granted the receiver, the same change passes; dropping the port flag then fails the policy.
      await t.app.get(PrivateDestinationsService).allow(c.customerId, `127.0.0.1/32:${rx.port}`);
      const moved = await patch(c, id, { url: rx.namedUrl('/x'), allow_nonstandard_port: true });
      expect(moved.status).toBe(200);
      expect(moved.body.data).toMatchObject({ url: rx.namedUrl('/x'), allow_nonstandard_port: true, disabled: false });
      expectError(await patch(c, id, { allow_nonstandard_port: false }), 422, 'WEBHOOK_DESTINATION_BLOCKED');
      expect(await get(c, id)).toMatchObject({ url: rx.namedUrl('/x'), allow_nonstandard_port: true });
    });
  });

  describe('auto-disable', () => {
    /**
     * The operators' notifications about this webhook, each verified with its signature by a
     * receiver whose clock is the app's (days ahead here): the notifier signs at the app's clock.
     */
    const notices = (webhookId: string) =>
      ops.received
        .filter((r) => (JSON.parse(r.body) as { data: { id: string } }).data.id === webhookId)
        .map((r) => verifiedAtAppClock(r.body, r.headers as Record<string, string>) as { type: string; timestamp: string; data: Record<string, unknown> });
    const verifiedAtAppClock = (body: string, headers: Record<string, string>): unknown => {
      const now = clock.now().getTime();
      const spy = jest.spyOn(Date, 'now').mockReturnValue(now);
      try {
        return new StandardWebhook(opsSecret).verify(body, headers);
      } finally {
        spy.mockRestore();
      }
    };

    it('disables at once on 410 Gone, tells the operators, and fans out to it no more', async () => {
      const s = await subscribe();
      answers.set(s.path, { status: 410 });
      await settled(s, 'failed');
      const w = await until('the webhook disabled', () => get(s.c, s.w.id), (x) => x.disabled);
      expect(w).toMatchObject({ disabled: true, disabled_reason: 'gone', disabled_at: expect.any(String) });
      await ops.waitUntil(() => notices(s.w.id).length > 0);
      expect(notices(s.w.id)).toEqual([
        { type: 'webhook.disabled', timestamp: w.disabled_at, data: { id: s.w.id, customer_id: s.c.customerId, url: s.w.url, reason: 'gone', disabled_at: w.disabled_at } },
      ]);
      expect(t.logs.lines.filter((l) => l.startsWith('warn') && l.includes('webhook disabled') && l.includes(s.w.id))).toHaveLength(1);
      expect(await t.app.get(Metrics).scrape()).toMatch(/trendhooks_webhooks_disabled_total\{reason="gone"\} [1-9]/);
      expect(await emit(s.subreddit)).toMatchObject({ created: true, deliveries: 0 });

      // Resumed, it is delivered to again (the receiver is back).
      answers.delete(s.path);
      expect((await patch(s.c, s.w.id, { disabled: false })).body.data).toMatchObject({ disabled: false, disabled_reason: null });
      await settled(s, 'delivered');
    });

    it('cancels the pending deliveries, says so, and resuming offers to recover them with the dry-run count', async () => {
      const s = await subscribe();
      // One delivery waits for its retry; then the receiver answers 410 to the next event.
      answers.set(s.path, { status: 503, headers: { 'retry-after': '3600' } });
      const { event_id } = await emit(s.subreddit);
      const waiting = deliveryId(event_id, s.w.id);
      await until('a pending retry', () => delivery(s.c, s.w.id, waiting), (d) => d?.state === 'pending');
      answers.set(s.path, { status: 410 });
      const gone = await settled(s, 'failed');
      const w = await until('the webhook disabled', () => get(s.c, s.w.id), (x) => x.disabled);
      expect(w).toMatchObject({ disabled_reason: 'gone', disabled_deliveries: 'cancelled' });
      expect(await delivery(s.c, s.w.id, waiting)).toMatchObject({ state: 'cancelled', last_error: 'webhook_disabled' });

      answers.delete(s.path);
      const resumed = await patch(s.c, s.w.id, { disabled: false });
      expect(resumed.status).toBe(200);
      // The cancelled delivery and the one that failed on the 410, both of the two days before the disable.
      const offer = resumed.body.data.resumed;
      expect(offer).toEqual({ released: 0, expired: 0, recover: { since: s.w.created_at, until: expect.any(String), queued: 2, next_since: null } });
      const dry = await t.http().post(`/v1/webhooks/${s.w.id}/recover`).set(s.c.auth).send({ since: offer.recover.since, until: offer.recover.until, dry_run: true });
      expect(dry.body.data.queued).toBe(2);
      const done = await t.http().post(`/v1/webhooks/${s.w.id}/recover`).set(s.c.auth).send({ since: offer.recover.since, until: offer.recover.until });
      expect(done.status).toBe(202);
      expect(done.body.data.queued).toBe(2);
      for (const id of [waiting, gone.id]) await until(`${id} delivered`, () => delivery(s.c, s.w.id, id), (d) => d?.state === 'delivered');
    });

    it('disables a webhook whose every attempt failed for five days, and not one with a short burst', async () => {
      const dead = await subscribe();
      const bursty = await subscribe();
      answers.set(dead.path, { status: 400 });
      answers.set(bursty.path, { status: 400 });
      // The bursty receiver fails once, then is quiet for six days.
      await settled(bursty, 'failed');
      // The dead one fails every day; after four days and a half, still enabled.
      for (let day = 0; day < 5; day++) {
        await settled(dead, 'failed');
        clock.offsetMs += DAY - HOUR;
      }
      // Each failure is counted once its outcome is written: give the last count a moment.
      await sleep(300);
      expect(await get(dead.c, dead.w.id)).toMatchObject({ disabled: false });
      clock.offsetMs += 6 * HOUR;
      // Past five days: the next failure disables it.
      await settled(dead, 'failed');
      const w = await until('the dead webhook disabled', () => get(dead.c, dead.w.id), (x) => x.disabled);
      expect(w).toMatchObject({ disabled_reason: 'failing' });
      await ops.waitUntil(() => notices(dead.w.id).length > 0);
      expect(notices(dead.w.id)).toEqual([{ type: 'webhook.disabled', timestamp: w.disabled_at, data: expect.objectContaining({ id: dead.w.id, reason: 'failing' }) }]);

      // Six days after its one failure, a burst of failures within minutes does not disable the other.
      clock.offsetMs += DAY;
      for (let i = 0; i < 5; i++) {
        await settled(bursty, 'failed');
        clock.offsetMs += 60_000;
      }
      await sleep(300);
      expect(await get(bursty.c, bursty.w.id)).toMatchObject({ disabled: false });
      expect(notices(bursty.w.id)).toEqual([]);
    });

    it('one delivered attempt restarts the clock', async () => {
      const s = await subscribe();
      answers.set(s.path, { status: 400 });
      for (let day = 0; day < 3; day++) {
        await settled(s, 'failed');
        clock.offsetMs += DAY;
      }
      answers.delete(s.path);
      await settled(s, 'delivered');
      answers.set(s.path, { status: 400 });
      // Failing again on days 3 to 6: four days since the success, spread over four of them.
      for (let day = 0; day < 4; day++) {
        clock.offsetMs += DAY - HOUR;
        await settled(s, 'failed');
      }
      await sleep(300);
      expect(await get(s.c, s.w.id)).toMatchObject({ disabled: false });
    });
  });
});
