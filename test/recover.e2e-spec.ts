import { deliveryId } from '../src/delivery/delivery-id';
import { EventsService } from '../src/delivery/events.service';
import { DeliveryQueue } from '../src/delivery/queue/delivery-queue';
import { newId } from '../src/common/ids';
import { TRENDHOOKS_DATA_SOURCE } from '../src/database/data-source.token';
import { EventEntity } from '../src/delivery/event.entity';
import { RECOVER_CALLS_PER_MINUTE } from '../src/webhooks/recover-budget';
import { RECOVER_MAX_EVENTS } from '../src/webhooks/recover-window';
import type { DataSource } from 'typeorm';
import { testDatabases } from './support/databases';
import { ShiftedClock, startTestApp, TestApp } from './support/app';
import { makeCert, Receiver, TestCert } from './support/receiver';
import { until } from './support/until';

const MINUTE = 60_000;
const DAY = 86_400_000;

/** Scaled-down schedule: a delivery that keeps failing transiently ends `failed` in about a second. */
const ENV = (cert: TestCert) => ({
  SSRF_ALLOW_CIDRS: '127.0.0.1/32',
  DELIVERY_CA_FILE: cert.caFile,
  DELIVERY_RETRY_SCHEDULE: '0.1,0.2,0.3',
  DELIVERY_POLL_INTERVAL_MS: '50',
  DELIVERY_TIMEOUT_MS: '3000',
  DELIVERY_LEASE_MS: '7000',
});

interface Delivery {
  id: string;
  event_id: string;
  state: string;
  attempts: { attempt: number; outcome: string; status_code: number | null }[];
}

type Auth = { auth: Record<string, string> };

describe.each(testDatabases())('POST /v1/webhooks/{id}/recover on %s', (_name, makeDb) => {
  let t: TestApp;
  let cert: TestCert;
  let rx: Receiver;
  // Only ever moved forward: deliveries in flight never see time run backwards.
  const clock = new ShiftedClock();
  /** The receiver's answer: 500 while down, else 200 after `delayMs`. */
  let down = true;
  let delayMs = 0;

  beforeAll(async () => {
    cert = makeCert();
    t = await startTestApp(makeDb(), { env: ENV(cert), clock });
    rx = await Receiver.start(cert);
    rx.behaviour = () => (down ? { status: 500 } : { status: 200, delayMs });
  });
  afterAll(async () => {
    await rx?.close();
    await t?.close();
  });

  const iso = (ms: number) => new Date(ms).toISOString();
  const now = () => clock.now().getTime();

  async function subscribe(c: Auth, subreddit: string) {
    const res = await t.http().post('/v1/webhooks').set(c.auth).send({ url: rx.namedUrl(), event: 'trends.surge', subreddit, allow_nonstandard_port: true });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  }

  async function log(c: Auth, webhookId: string): Promise<Delivery[]> {
    const res = await t.http().get(`/v1/webhooks/${webhookId}/deliveries`).query({ limit: '100' }).set(c.auth);
    expect(res.status).toBe(200);
    return res.body.data as Delivery[];
  }

  function recover(c: Auth, webhookId: string, body: Record<string, unknown>) {
    return t.http().post(`/v1/webhooks/${webhookId}/recover`).set(c.auth).send(body);
  }

  const emit = (subreddit: string, n: number) => t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { n } });

  /** Waits until these deliveries of the webhook are all in `state`. */
  async function settled(c: Auth, webhookId: string, ids: string[], state: string): Promise<Delivery[]> {
    return until(
      async () => (await log(c, webhookId)).filter((d) => ids.includes(d.id)),
      (ds) => ds.length === ids.length && ds.every((d) => d.state === state),
      20_000,
      `${ids.length} deliveries ${state}`,
    );
  }

  /** What the receiver got after index `from`, as webhook-id → count. */
  function receivedSince(from: number): Map<string, number> {
    const out = new Map<string, number>();
    for (const r of rx.received.slice(from)) out.set(String(r.headers['webhook-id']), (out.get(String(r.headers['webhook-id'])) ?? 0) + 1);
    return out;
  }

  it('delivers what an outage missed exactly once, under the original webhook-id; dry_run only counts; a second recover queues nothing twice', async () => {
    const c = await t.customer();
    const subreddit = `rec${Math.random().toString(36).slice(2, 12)}`;
    const start = now();

    // Before the webhook exists: an event of its subscription it never subscribed to.
    const before = await emit(subreddit, 0);
    clock.offsetMs += MINUTE;
    const w = await subscribe(c, subreddit);
    clock.offsetMs += MINUTE;

    // Delivered while the receiver was up: never recovered.
    down = false;
    const ok = await emit(subreddit, 1);
    await settled(c, w, [deliveryId(ok.event_id, w)], 'delivered');

    // The outage: three events whose deliveries run out of attempts on 500s, and a test event.
    down = true;
    const missed: string[] = [];
    for (const n of [2, 3, 4]) {
      clock.offsetMs += MINUTE;
      missed.push((await emit(subreddit, n)).event_id);
    }
    const test = await t.http().post(`/v1/webhooks/${w}/test`).set(c.auth);
    expect(test.status).toBe(202);
    const failedIds = [...missed.map((e) => deliveryId(e, w)), test.body.data.delivery_id as string];
    await settled(c, w, failedIds, 'failed');

    // An event of the subscription with no delivery at all (as one skipped while the webhook was disabled).
    clock.offsetMs += MINUTE;
    const skipped = { id: newId('evt', now()), type: 'trends.surge', subreddit, payload: '{"n":5}', createdAt: clock.now() };
    await t.app.get(DeliveryQueue).insertEventWithDeliveries(skipped, [], (x) => deliveryId(skipped.id, x), clock.now());
    missed.push(skipped.id);
    const missedIds = missed.map((e) => deliveryId(e, w));

    // Another customer's webhook on the same subreddit is not this webhook's business.
    const other = await t.customer();
    const theirs = await subscribe(other, subreddit);
    expect((await recover(other, w, { since: iso(start) })).status).toBe(404);

    clock.offsetMs += MINUTE;
    const dry = await recover(c, w, { since: iso(start), dry_run: true });
    expect(dry.status).toBe(202);
    expect(dry.body).toMatchObject({
      data: { queued: 4, since: iso(start), until: expect.any(String), dry_run: true, next_since: null },
      meta: { request_id: dry.headers['x-request-id'], page: null },
    });
    // Counting changed nothing.
    const afterDry = await log(c, w);
    expect(afterDry.filter((d) => failedIds.includes(d.id)).every((d) => d.state === 'failed')).toBe(true);
    expect(afterDry.map((d) => d.id)).not.toContain(deliveryId(skipped.id, w));

    // The receiver is back, slow enough that the queued deliveries are still pending or in flight at the second call.
    down = false;
    delayMs = 1500;
    const from = rx.received.length;
    const first = await recover(c, w, { since: iso(start) });
    expect(first.status).toBe(202);
    expect(first.body.data).toMatchObject({ queued: 4, dry_run: false, next_since: null });
    const second = await recover(c, w, { since: iso(start) });
    expect(second.body.data).toMatchObject({ queued: 0, dry_run: false });

    const done = await settled(c, w, missedIds, 'delivered');
    // The failed ones went out again under their own ids, their earlier attempts kept before the new one.
    for (const d of done.filter((x) => x.id !== deliveryId(skipped.id, w))) {
      expect(d.attempts.map((a) => [a.attempt, a.outcome])).toEqual([[1, 'transient'], [2, 'transient'], [3, 'transient'], [4, 'transient'], [1, 'delivered']]);
      expect(d.attempts[4].status_code).toBe(200);
    }
    delayMs = 0;
    // Each missed event exactly once, with its deterministic webhook-id; nothing else.
    const got = receivedSince(from);
    expect([...got.keys()].sort()).toEqual([...missedIds].sort());
    expect([...got.values()].every((n) => n === 1)).toBe(true);
    const bodies = rx.received.slice(from).map((r) => JSON.parse(r.body) as { type: string; data: { event_id: string; webhook_id: string; n: number } });
    expect(bodies.map((b) => [b.type, b.data.event_id, b.data.webhook_id, b.data.n]).sort((a, b) => Number(a[3]) - Number(b[3]))).toEqual(missed.map((e, i) => ['trends.surge', e, w, i + 2]));

    // Delivered now: a later recover finds nothing, and neither the event from before the webhook nor the test event was sent.
    expect((await recover(c, w, { since: iso(start) })).body.data.queued).toBe(0);
    expect(got.has(deliveryId(before.event_id, w))).toBe(false);
    expect((await log(c, w)).find((d) => d.id === test.body.data.delivery_id)?.state).toBe('failed');
    // The other customer's webhook was left as it was.
    expect((await log(other, theirs)).map((d) => d.state)).toEqual([]);
  });

  it('recovers only [since, until)', async () => {
    const c = await t.customer();
    const subreddit = `rec${Math.random().toString(36).slice(2, 12)}`;
    const w = await subscribe(c, subreddit);
    down = true;
    const events: { id: string; at: number }[] = [];
    for (const n of [1, 2, 3]) {
      clock.offsetMs += MINUTE;
      const at = now();
      events.push({ id: (await emit(subreddit, n)).event_id, at });
    }
    await settled(c, w, events.map((e) => deliveryId(e.id, w)), 'failed');
    clock.offsetMs += MINUTE;
    const dry = await recover(c, w, { since: iso(events[1].at - 1), until: iso(events[2].at - 1), dry_run: true });
    expect(dry.body.data).toMatchObject({ queued: 1, since: iso(events[1].at - 1), until: iso(events[2].at - 1) });
    down = false;
    const res = await recover(c, w, { since: iso(events[1].at - 1), until: iso(events[2].at - 1) });
    expect(res.body.data.queued).toBe(1);
    await settled(c, w, [deliveryId(events[1].id, w)], 'delivered');
    const states = new Map((await log(c, w)).map((d) => [d.event_id, d.state]));
    expect([events[0], events[2]].map((e) => states.get(e.id))).toEqual(['failed', 'failed']);
  });

  it('catches up what a pause skipped: no delivery while disabled, a dry run counts it, a real recover is 409 until resumed, then delivers each once', async () => {
    const c = await t.customer();
    const subreddit = `rec${Math.random().toString(36).slice(2, 12)}`;
    const w = await subscribe(c, subreddit);
    down = false;
    const paused = await t.http().patch(`/v1/webhooks/${w}`).set(c.auth).send({ disabled: true });
    expect(paused.status).toBe(200);
    expect(paused.body.data).toMatchObject({ disabled: true, disabled_reason: 'manual' });
    clock.offsetMs += MINUTE;
    const since = now() - 1;
    const skipped: string[] = [];
    for (const n of [1, 2]) {
      clock.offsetMs += MINUTE;
      skipped.push((await emit(subreddit, n)).event_id);
    }
    // Recorded, not delivered: the fan-out left the disabled webhook out.
    expect(await log(c, w)).toEqual([]);
    clock.offsetMs += MINUTE;
    const dry = await recover(c, w, { since: iso(since), dry_run: true });
    expect(dry.status).toBe(202);
    expect(dry.body.data).toMatchObject({ queued: 2, dry_run: true });
    const refused = await recover(c, w, { since: iso(since) });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'WEBHOOK_DISABLED', message: expect.stringContaining('"disabled": false') });
    expect(await log(c, w)).toEqual([]);
    const from = rx.received.length;
    expect((await t.http().patch(`/v1/webhooks/${w}`).set(c.auth).send({ disabled: false })).status).toBe(200);
    const res = await recover(c, w, { since: iso(since) });
    expect(res.status).toBe(202);
    expect(res.body.data.queued).toBe(2);
    const ids = skipped.map((e) => deliveryId(e, w));
    await settled(c, w, ids, 'delivered');
    const got = receivedSince(from);
    expect(ids.map((id) => got.get(id))).toEqual([1, 1]);
  });

  /** `n` events of the subscription stamped one second apart from `fromMs`, written in bulk (no delivery). */
  async function backfill(subreddit: string, fromMs: number, n: number, idPrefix = 'evt'): Promise<void> {
    const repo = t.app.get<DataSource>(TRENDHOOKS_DATA_SOURCE).getRepository(EventEntity);
    for (let i = 0; i < n; i += 500) {
      const chunk = Array.from({ length: Math.min(500, n - i) }, (_, j) => {
        const at = fromMs + (i + j) * 1000;
        return { id: newId(idPrefix, at), type: 'trends.surge', subreddit, payload: '{}', createdAt: new Date(at) };
      });
      await repo.insert(chunk);
    }
  }

  it('walks from the webhook\'s creation: past 10,000 events from before it, next_since names none of them and the one event since is found', async () => {
    const c = await t.customer();
    const subreddit = `rec${Math.random().toString(36).slice(2, 12)}`;
    const start = now() - DAY;
    // More events before the webhook than one call looks at.
    await backfill(subreddit, start, RECOVER_MAX_EVENTS + 1);
    clock.offsetMs += MINUTE;
    const w = await subscribe(c, subreddit);
    const created = (await t.http().get(`/v1/webhooks/${w}`).set(c.auth)).body.data.created_at as string;
    clock.offsetMs += MINUTE;
    const after = { id: newId('evt', now()), type: 'trends.surge', subreddit, payload: '{}', createdAt: clock.now() };
    await t.app.get(DeliveryQueue).insertEventWithDeliveries(after, [], (x) => deliveryId(after.id, x), clock.now());
    clock.offsetMs += MINUTE;

    const dry = await recover(c, w, { since: iso(start - 1), dry_run: true });
    expect(dry.status).toBe(202);
    expect(dry.body.data).toMatchObject({ queued: 1, dry_run: true, next_since: null });
    // The store read the one event since the webhook, none of the 10,001 before it.
    const scope = { webhookId: w, customerId: c.customerId, type: 'trends.surge', subreddit, subscribedAt: new Date(created), since: new Date(start - 1), until: clock.now() };
    expect(await t.app.get(DeliveryQueue).recover(scope, clock.now(), { dryRun: true, maxEvents: RECOVER_MAX_EVENTS })).toEqual({ queued: 1, nextSince: null, read: 1 });
    down = true;
    const res = await recover(c, w, { since: iso(start - 1) });
    expect(res.body.data).toMatchObject({ queued: 1, next_since: null });
  });

  it('counts test events in a range as rows read and never queues them; next_since, when the cap stops the walk, is not before the webhook', async () => {
    const c = await t.customer();
    const subreddit = `rec${Math.random().toString(36).slice(2, 12)}`;
    const w = await subscribe(c, subreddit);
    const created = new Date((await t.http().get(`/v1/webhooks/${w}`).set(c.auth)).body.data.created_at as string).getTime();
    clock.offsetMs += MINUTE;
    await backfill(subreddit, now(), 3, 'evt_test');
    await backfill(subreddit, now() + 10_000, 2);
    clock.offsetMs += MINUTE;
    const scope = { webhookId: w, customerId: c.customerId, type: 'trends.surge', subreddit, subscribedAt: new Date(created), since: new Date(created - DAY), until: clock.now() };
    const queue = t.app.get(DeliveryQueue);
    expect(await queue.recover(scope, clock.now(), { dryRun: true, maxEvents: 100 })).toEqual({ queued: 2, nextSince: null, read: 5 });
    const capped = await queue.recover(scope, clock.now(), { dryRun: true, maxEvents: 4 });
    expect(capped).toMatchObject({ queued: 1, read: 4 });
    expect(capped.nextSince!.getTime()).toBeGreaterThanOrEqual(created);
  });

  it(`refuses a customer's recover past ${RECOVER_CALLS_PER_MINUTE} a minute, dry runs included, with 429 RATE_LIMITED and Retry-After; another customer's still runs`, async () => {
    const c = await t.customer();
    const other = await t.customer();
    const subreddit = `rec${Math.random().toString(36).slice(2, 12)}`;
    const w = await subscribe(c, subreddit);
    const theirs = await subscribe(other, subreddit);
    // At the start of a minute of the shifted clock: every call below falls in one window.
    clock.offsetMs += MINUTE - (now() % MINUTE) + 100;
    const since = iso(now() - DAY);
    for (let i = 0; i < RECOVER_CALLS_PER_MINUTE; i++) expect((await recover(c, w, { since, dry_run: true })).status).toBe(202);
    const refused = await recover(c, w, { since, dry_run: true });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('recovers per minute'), request_id: refused.headers['x-request-id'] });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await recover(c, w, { since })).status).toBe(429);
    expect((await recover(other, theirs, { since, dry_run: true })).status).toBe(202);
  });

  it.each([
    [{}, 'since is required'],
    [{ since: 42 }, 'since must be a string'],
    [{ since: 'yesterday' }, 'since must be an ISO 8601'],
    [{ since: '2026-11-28' }, 'since must be an ISO 8601'],
    [{ since: 'NOW-1', until: 'x' }, 'since must be an ISO 8601'],
    [{ since: 'FUTURE' }, 'since must not be in the future'],
    [{ since: 'DAYS-15' }, 'until must be at most 14 days after since'],
    [{ since: 'DAYS-20', until: 'DAYS-5.5' }, 'until must be at most 14 days after since'],
    [{ since: 'DAYS-2', until: 'DAYS-3' }, 'since must be before until'],
    [{ since: 'DAYS-1', dry_run: 'yes' }, 'dry_run must be a boolean'],
    [{ since: 'DAYS-1', replay: true }, 'unknown field "replay"'],
  ])('answers %j with 400 VALIDATION_ERROR', async (body, message) => {
    const c = await t.customer();
    const w = await subscribe(c, `rec${Math.random().toString(36).slice(2, 12)}`);
    const at = (v: unknown) => {
      if (typeof v !== 'string') return v;
      if (v === 'FUTURE') return iso(now() + MINUTE);
      const m = /^DAYS-([\d.]+)$/.exec(v);
      return m ? iso(now() - Number(m[1]) * DAY) : v;
    };
    const sent = Object.fromEntries(Object.entries(body).map(([k, v]) => [k, k === 'since' || k === 'until' ? at(v) : v]));
    const res = await recover(c, w, sent);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining(message), request_id: res.headers['x-request-id'] });
  });

  it('takes a window of exactly 14 days; refuses a bad webhook id, a missing webhook, a non-JSON body and a plan below Business', async () => {
    const c = await t.customer();
    const w = await subscribe(c, `rec${Math.random().toString(36).slice(2, 12)}`);
    const until14 = now() - MINUTE;
    const ok = await recover(c, w, { since: iso(until14 - 14 * DAY), until: iso(until14), dry_run: true });
    expect(ok.status).toBe(202);
    expect(ok.body.data).toEqual({ queued: 0, since: iso(until14 - 14 * DAY), until: iso(until14), dry_run: true, next_since: null });

    const since = iso(now() - DAY);
    expect((await recover(c, 'not-a-ulid', { since })).body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('webhook_id') });
    expect((await recover(c, '01J9Z6K3W4Q8X2V7N5M1B0C9D8', { since })).status).toBe(404);
    const text = await t.http().post(`/v1/webhooks/${w}/recover`).set(c.auth).set('Content-Type', 'text/plain').send('since');
    expect([text.status, text.body.error.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    const pro = await t.customer('pro');
    const res = await recover(pro, w, { since });
    expect([res.status, res.body.error.code]).toEqual([403, 'PLAN_REQUIRED']);
  });
});
