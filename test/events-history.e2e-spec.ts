import { EventsService } from '../src/delivery/events.service';
import { testDatabases } from './support/databases';
import { ShiftedClock, startTestApp, TestApp } from './support/app';

const MINUTE = 60_000;

interface EventItem {
  id: string;
  type: string;
  subreddit: string;
  created_at: string;
  data: Record<string, unknown>;
}

interface Body {
  data: EventItem[];
  meta: { request_id: string; page: { limit: number; next_cursor: string | null; prev_cursor: string | null } };
}

type Auth = { auth: Record<string, string> };

describe.each(testDatabases())('GET /v1/events on %s', (_name, makeDb) => {
  let t: TestApp;
  const clock = new ShiftedClock();

  beforeAll(async () => {
    // An API-only app: nothing is delivered, the history is read from the events alone.
    t = await startTestApp(makeDb(), { role: 'api', clock });
  });
  afterAll(async () => {
    await t?.close();
  });

  const name = (p: string) => `${p}${Math.random().toString(36).slice(2, 12)}`;

  async function subscribe(c: Auth, event: string, subreddit: string): Promise<string> {
    const res = await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/in', event, subreddit });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  }

  async function history(c: Auth, query: Record<string, string> = {}): Promise<Body> {
    const res = await t.http().get('/v1/events').query(query).set(c.auth);
    expect(res.status).toBe(200);
    return res.body as Body;
  }

  /** Emits one event a minute after the last; its id. */
  async function emit(type: string, subreddit: string, data: Record<string, unknown> = {}): Promise<string> {
    clock.offsetMs += MINUTE;
    return (await t.app.get(EventsService).emit({ type, subreddit, data })).event_id;
  }

  const ids = (b: Body) => b.data.map((e) => e.id);

  describe("a customer's subscriptions", () => {
    let a: Auth;
    let b: Auth;
    let subA: string;
    let subB: string;
    // Oldest first.
    let surgeA: string[];
    let risingA: string;
    let velocityA: string;
    let surgeB: string;
    let webhookA: string;

    beforeAll(async () => {
      [a, b] = [await t.customer(), await t.customer()];
      [subA, subB] = [name('eva'), name('evb')];
      // Before anyone subscribes: never shown.
      await emit('trends.surge', subA, { n: -1 });
      clock.offsetMs += MINUTE;
      webhookA = await subscribe(a, 'trends.surge', subA);
      await subscribe(a, 'trends.surge', subA); // a second webhook on the same subscription: no event twice
      await subscribe(a, 'trends.rising', subA);
      await subscribe(b, 'trends.surge', subB);
      surgeA = [await emit('trends.surge', subA, { n: 1, score: 4.5 }), await emit('trends.surge', subA, { n: 2 })];
      risingA = await emit('trends.rising', subA, { n: 3 });
      velocityA = await emit('trends.velocity', subA, { n: 4 });
      surgeB = await emit('trends.surge', subB, { n: 5 });
      surgeA.push(await emit('trends.surge', subA, { n: 6, event_id: 'spoofed', webhook_id: 'spoofed' }));
      // A test event on A's webhook: never in the history.
      expect((await t.http().post(`/v1/webhooks/${webhookA}/test`).set(a.auth)).status).toBe(202);
    });

    it("lists the events of the caller's subscriptions only, newest first, shaped like the delivered body", async () => {
      const page = await history(a);
      expect(ids(page)).toEqual([surgeA[2], risingA, surgeA[1], surgeA[0]]);
      expect(page.meta).toMatchObject({ page: { limit: 25, next_cursor: null, prev_cursor: null } });
      expect(page.data[3]).toEqual({ id: surgeA[0], type: 'trends.surge', subreddit: subA, created_at: expect.any(String), data: { event_id: surgeA[0], subreddit: subA, n: 1, score: 4.5 } });
      // A figure named like a reserved key never replaces it.
      expect(page.data[0].data).toEqual({ event_id: surgeA[2], subreddit: subA, n: 6 });
      expect(ids(page)).not.toContain(velocityA);
      expect(ids(page)).not.toContain(surgeB);

      expect(ids(await history(b))).toEqual([surgeB]);
      expect(ids(await history(await t.customer()))).toEqual([]);
    });

    it('filters by kind, subreddit and since; a filter naming what the caller does not subscribe to finds nothing', async () => {
      expect(ids(await history(a, { event: 'trends.surge' }))).toEqual([surgeA[2], surgeA[1], surgeA[0]]);
      expect(ids(await history(a, { event: 'trends.rising', subreddit: `r/${subA.toUpperCase()}` }))).toEqual([risingA]);
      expect(ids(await history(a, { event: 'trends.velocity' }))).toEqual([]);
      expect(ids(await history(a, { subreddit: subB }))).toEqual([]);
      expect(ids(await history(b, { subreddit: subA }))).toEqual([]);
      const all = await history(a);
      const at = all.data[2].created_at; // surgeA[1]
      expect(ids(await history(a, { since: at }))).toEqual([surgeA[2], risingA, surgeA[1]]);
      expect(ids(await history(a, { since: at, event: 'trends.surge' }))).toEqual([surgeA[2], surgeA[1]]);
    });

    it('pages both ways with the filters, and refuses a cursor given with other filters', async () => {
      const p1 = await history(a, { limit: '2' });
      expect(ids(p1)).toEqual([surgeA[2], risingA]);
      expect(p1.meta.page.prev_cursor).toBeNull();
      const p2 = await history(a, { limit: '2', cursor: p1.meta.page.next_cursor! });
      expect(ids(p2)).toEqual([surgeA[1], surgeA[0]]);
      expect(p2.meta.page.next_cursor).toBeNull();
      expect(ids(await history(a, { limit: '2', cursor: p2.meta.page.prev_cursor! }))).toEqual([surgeA[2], risingA]);

      const s1 = await history(a, { event: 'trends.surge', limit: '1' });
      const s2 = await history(a, { event: 'trends.surge', limit: '1', cursor: s1.meta.page.next_cursor! });
      expect([ids(s1), ids(s2)]).toEqual([[surgeA[2]], [surgeA[1]]]);

      for (const other of [{}, { event: 'trends.rising' }, { event: 'trends.surge', subreddit: subA }]) {
        const res = await t.http().get('/v1/events').query({ ...other, limit: '1', cursor: s1.meta.page.next_cursor! }).set(a.auth);
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'INVALID_CURSOR', message: 'cursor was issued for other route parameters' });
      }
      // Another customer cannot use A's cursor.
      const stolen = await t.http().get('/v1/events').query({ limit: '2', cursor: p1.meta.page.next_cursor! }).set(b.auth);
      expect(stolen.body.error).toMatchObject({ code: 'INVALID_CURSOR', message: 'cursor was issued for another customer' });
    });

    it("shows B the events of A's subreddit once B subscribes to it too, from then on", async () => {
      const c = await t.customer();
      const sub = name('evc');
      await subscribe(a, 'trends.velocity', sub);
      const earlier = await emit('trends.velocity', sub, { n: 7 });
      clock.offsetMs += MINUTE;
      await subscribe(c, 'trends.velocity', sub);
      const later = await emit('trends.velocity', sub, { n: 8 });
      expect(ids(await history(c))).toEqual([later]);
      expect(ids(await history(a, { subreddit: sub }))).toEqual([later, earlier]);
    });
  });

  it.each([
    ['event=trends.nope', 'event'],
    ['event=webhook.test', 'event'],
    ['event=trends.surge&event=trends.rising', 'event'],
    ['subreddit=_nope', 'subreddit'],
    ['subreddit=ab', 'subreddit'],
    ['since=yesterday', 'since'],
    ['since=2026-11-28T07:00:00', 'since'],
  ])('answers %s with 400 VALIDATION_ERROR naming the parameter', async (query, named) => {
    const c = await t.customer();
    const res = await t.http().get(`/v1/events?${query}`).set(c.auth);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining(named), request_id: res.headers['x-request-id'] });
  });

  it('refuses a bad limit and a plan below Business', async () => {
    const c = await t.customer();
    for (const limit of ['0', '101', 'x']) {
      const res = await t.http().get('/v1/events').query({ limit }).set(c.auth);
      expect([res.status, res.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    }
    const pro = await t.customer('pro');
    const res = await t.http().get('/v1/events').set(pro.auth);
    expect([res.status, res.body.error.code]).toEqual([403, 'PLAN_REQUIRED']);
    expect((await t.http().get('/v1/events')).status).toBe(401);
  });
});
