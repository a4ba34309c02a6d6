import { deliveryId } from '../src/delivery/delivery-id';
import { EventsService } from '../src/delivery/events.service';
import { testDatabases } from './support/databases';
import { ShiftedClock, startTestApp, TestApp } from './support/app';
import { makeCert, Receiver, sleep, TestCert } from './support/receiver';

const HOUR = 3600_000;

/** Scaled-down schedule: a delivery that keeps failing transiently ends `failed` in about a second. */
const ENV = (cert: TestCert) => ({
  SSRF_ALLOW_CIDRS: '127.0.0.1/32',
  DELIVERY_CA_FILE: cert.caFile,
  DELIVERY_RETRY_SCHEDULE: '0.1,0.2,0.3',
  DELIVERY_POLL_INTERVAL_MS: '50',
  DELIVERY_TIMEOUT_MS: '1000',
  DELIVERY_LEASE_MS: '7000',
});

interface Delivery {
  id: string;
  state: string;
  created_at: string;
  attempts: { outcome: string }[];
}

describe.each(testDatabases())('delivery log filters and webhook health on %s', (_name, makeDb) => {
  let t: TestApp;
  let cert: TestCert;
  let rx: Receiver;
  // Only ever moved forward: deliveries in flight never see time run backwards.
  const clock = new ShiftedClock();

  beforeAll(async () => {
    cert = makeCert();
    t = await startTestApp(makeDb(), { env: ENV(cert), clock });
    rx = await Receiver.start(cert);
    // The event's `count` picks the answer: 400 fails for good, 503 fails transiently every time, else 200.
    rx.behaviour = (r) => {
      const count = (JSON.parse(r.body) as { data: { count: number } }).data.count;
      return { status: count === 400 || count === 503 ? count : 200 };
    };
  });
  afterAll(async () => {
    await rx?.close();
    await t?.close();
  });

  async function subscribe() {
    const c = await t.customer();
    const subreddit = `sub${Math.random().toString(36).slice(2, 12)}`;
    const res = await t.http().post('/v1/webhooks').set(c.auth).send({ url: rx.namedUrl(), event: 'trends.surge', subreddit, allow_nonstandard_port: true });
    expect(res.status).toBe(201);
    return { c, w: res.body.data as { id: string; success_rate_24h: number | null; consecutive_failures: number }, subreddit };
  }

  async function log(c: { auth: Record<string, string> }, webhookId: string, query: Record<string, string> = {}) {
    const res = await t.http().get(`/v1/webhooks/${webhookId}/deliveries`).query(query).set(c.auth);
    expect(res.status).toBe(200);
    return res.body as { data: Delivery[]; meta: { page: { next_cursor: string | null; prev_cursor: string | null } } };
  }

  /** Emits one event at the clock's current time and waits for its delivery to end (delivered or failed). */
  async function settled(c: { auth: Record<string, string> }, webhookId: string, subreddit: string, count: number): Promise<Delivery> {
    const { event_id } = await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { count } });
    const id = deliveryId(event_id, webhookId);
    const end = Date.now() + 15_000;
    for (;;) {
      const d = (await log(c, webhookId, { limit: '100' })).data.find((x) => x.id === id);
      if (d && (d.state === 'delivered' || d.state === 'failed')) return d;
      if (Date.now() > end) throw new Error(`delivery ${id} did not settle: ${JSON.stringify(d)}`);
      await sleep(50);
    }
  }

  const ids = (body: { data: Delivery[] }) => body.data.map((d) => d.id);

  describe('GET /v1/webhooks/{id}/deliveries filters', () => {
    let c: { auth: Record<string, string> };
    let webhookId: string;
    // Oldest first: delivered, failed, delivered, failed, delivered; an hour apart.
    let d: Delivery[];

    beforeAll(async () => {
      const s = await subscribe();
      c = s.c;
      webhookId = s.w.id;
      d = [];
      for (const count of [200, 400, 200, 400, 200]) {
        d.push(await settled(c, webhookId, s.subreddit, count));
        clock.offsetMs += HOUR;
      }
      expect(d.map((x) => x.state)).toEqual(['delivered', 'failed', 'delivered', 'failed', 'delivered']);
    });

    it('filters by state', async () => {
      expect(ids(await log(c, webhookId, { state: 'failed' }))).toEqual([d[3].id, d[1].id]);
      expect(ids(await log(c, webhookId, { state: 'delivered' }))).toEqual([d[4].id, d[2].id, d[0].id]);
      expect(ids(await log(c, webhookId, { state: 'pending' }))).toEqual([]);
    });

    it('filters by creation time, since included and until excluded', async () => {
      expect(ids(await log(c, webhookId, { since: d[1].created_at, until: d[3].created_at }))).toEqual([d[2].id, d[1].id]);
      expect(ids(await log(c, webhookId, { since: d[3].created_at }))).toEqual([d[4].id, d[3].id]);
      expect(ids(await log(c, webhookId, { until: d[1].created_at }))).toEqual([d[0].id]);
      // The same instant in another zone, `+` escaped in the query string as it must be.
      const at = new Date(d[3].created_at);
      const plusTwo = new Date(at.getTime() + 2 * HOUR).toISOString().replace('Z', '+02:00');
      expect(ids(await log(c, webhookId, { since: plusTwo }))).toEqual([d[4].id, d[3].id]);
    });

    it('combines the filters', async () => {
      expect(ids(await log(c, webhookId, { state: 'delivered', since: d[1].created_at }))).toEqual([d[4].id, d[2].id]);
      expect(ids(await log(c, webhookId, { state: 'failed', since: d[2].created_at, until: d[4].created_at }))).toEqual([d[3].id]);
    });

    it('pages across pages with the filters, both ways, and refuses a cursor given with other filters', async () => {
      const q = { state: 'delivered' };
      const p1 = await log(c, webhookId, { ...q, limit: '1' });
      expect(ids(p1)).toEqual([d[4].id]);
      const p2 = await log(c, webhookId, { ...q, limit: '1', cursor: p1.meta.page.next_cursor! });
      expect(ids(p2)).toEqual([d[2].id]);
      const p3 = await log(c, webhookId, { ...q, limit: '1', cursor: p2.meta.page.next_cursor! });
      expect(ids(p3)).toEqual([d[0].id]);
      expect(p3.meta.page.next_cursor).toBeNull();
      expect(ids(await log(c, webhookId, { ...q, limit: '1', cursor: p3.meta.page.prev_cursor! }))).toEqual([d[2].id]);

      const ranged = { since: d[1].created_at, until: d[4].created_at, limit: '2' };
      const r1 = await log(c, webhookId, ranged);
      expect(ids(r1)).toEqual([d[3].id, d[2].id]);
      const r2 = await log(c, webhookId, { ...ranged, cursor: r1.meta.page.next_cursor! });
      expect(ids(r2)).toEqual([d[1].id]);
      expect(r2.meta.page.next_cursor).toBeNull();

      for (const other of [{ state: 'failed' }, {}, { state: 'delivered', since: d[0].created_at }]) {
        const res = await t.http().get(`/v1/webhooks/${webhookId}/deliveries`).query({ ...other, limit: '1', cursor: p1.meta.page.next_cursor! }).set(c.auth);
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'INVALID_CURSOR', message: 'cursor was issued for other route parameters' });
      }
    });

    it.each([
      ['state=lost', 'state'],
      ['state=Failed', 'state'],
      ['state=failed&state=pending', 'state'],
      ['state=', 'state'],
      ['since=yesterday', 'since'],
      ['since=2026-11-28', 'since'],
      ['since=2026-02-30T00:00:00Z', 'since'],
      ['until=2026-11-28T07:00:00', 'until'],
      ['until=1764313200000', 'until'],
      ['since=2026-11-28T08:00:00Z&until=2026-11-28T08:00:00Z', 'since must be before until'],
    ])('answers %s with 400 VALIDATION_ERROR naming the parameter', async (query, named) => {
      const res = await t.http().get(`/v1/webhooks/${webhookId}/deliveries?${query}`).set(c.auth);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining(named), request_id: res.headers['x-request-id'] });
    });
  });

  it('shows success_rate_24h and consecutive_failures over the last 24 h of deliveries, on get and list', async () => {
    const { c, w, subreddit } = await subscribe();
    expect(w).toMatchObject({ success_rate_24h: null, consecutive_failures: 0 });
    const health = async () => {
      const got = (await t.http().get(`/v1/webhooks/${w.id}`).set(c.auth)).body.data;
      const listed = (await t.http().get('/v1/webhooks').set(c.auth)).body.data.find((x: { id: string }) => x.id === w.id);
      expect([listed.success_rate_24h, listed.consecutive_failures]).toEqual([got.success_rate_24h, got.consecutive_failures]);
      return { success_rate_24h: got.success_rate_24h, consecutive_failures: got.consecutive_failures };
    };

    // A day and a half ago: two delivered.
    await settled(c, w.id, subreddit, 200);
    await settled(c, w.id, subreddit, 200);
    expect(await health()).toEqual({ success_rate_24h: 1, consecutive_failures: 0 });

    // Two hours ago (30 h later): failed for good, delivered, failed for good, then four transient failures in a row.
    clock.offsetMs += 28 * HOUR;
    expect((await settled(c, w.id, subreddit, 400)).attempts).toHaveLength(1);
    // The two delivered ones are out of the window now; this failure is all there is.
    expect(await health()).toEqual({ success_rate_24h: 0, consecutive_failures: 1 });
    await settled(c, w.id, subreddit, 200);
    expect(await health()).toEqual({ success_rate_24h: 0.5, consecutive_failures: 0 });
    await settled(c, w.id, subreddit, 400);
    const exhausted = await settled(c, w.id, subreddit, 503);
    expect(exhausted.attempts.map((a) => a.outcome)).toEqual(['transient', 'transient', 'transient', 'transient']);

    // Now: 1 delivered of 7 attempts; 5 failures since it.
    clock.offsetMs += 2 * HOUR;
    expect(await health()).toEqual({ success_rate_24h: 0.1429, consecutive_failures: 5 });

    // Until they are a day old they count; then nothing is left in the window.
    clock.offsetMs += 21 * HOUR;
    expect(await health()).toEqual({ success_rate_24h: 0.1429, consecutive_failures: 5 });
    clock.offsetMs += 2 * HOUR;
    expect(await health()).toEqual({ success_rate_24h: null, consecutive_failures: 0 });
  });
});
