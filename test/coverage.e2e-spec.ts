import { Metrics } from '../src/metrics/metrics.service';
import type { PollerTuning } from '../src/trends/trends.options';
import { testDatabases } from './support/databases';
import { FakeReddit } from './support/fake-reddit';
import { startTestApp, TestApp } from './support/app';
import { until } from './support/until';

/** Short enough that a test sees several polls in a second or two. */
const POLL_MS = 200;
// A refused subreddit is tried again after 300 ms (30 min by default), so recovery shows within the test.
const TUNING: Partial<PollerTuning> = { backoffBaseMs: 300, backoffMaxMs: 2000, maxRetries: 1, shutdownGraceMs: 2000, quotaPerMinute: 100_000, unavailableBackoffMs: 300 };
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe.each(testDatabases())('subreddit coverage on %s', (_dbName, makeDb) => {
  let fake: FakeReddit;
  let t: TestApp | undefined;

  async function start(env: Record<string, string> = {}, tuning: Partial<PollerTuning> = {}): Promise<TestApp> {
    t = await startTestApp(makeDb(), {
      env: { REDDIT_BASE_URL: fake.url, ...env },
      patch: (c) => {
        c.trends.pollIntervalMs = POLL_MS;
      },
      role: 'pipeline',
      poller: true,
      pollerTuning: { ...TUNING, ...tuning },
    });
    return t;
  }

  beforeEach(async () => {
    fake = await FakeReddit.start();
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
    await fake.close();
  });

  const sub = () => `cov${Math.random().toString(36).slice(2, 10)}`;

  async function coverage(app: TestApp, auth: Record<string, string>, name: string): Promise<any> {
    const res = await app.http().get(`/v1/subreddits/${name}`).set(auth);
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ request_id: res.headers['x-request-id'], page: null });
    return res.body.data;
  }

  async function hook(app: TestApp, auth: Record<string, string>, subreddit: string): Promise<string> {
    const res = await app.http().post('/v1/webhooks').set(auth).send({ url: 'https://hooks.example.com/h', event: 'trends.surge', subreddit });
    expect(res.status).toBe(201);
    return res.body.data.id;
  }

  it("shows private, banned and unknown subreddits in GET /v1/subreddits/{name}, the webhook's source_status, the logs and the metrics; recovery shows ok", async () => {
    const [priv, ban, gone, fine] = [sub(), sub(), sub(), sub()];
    fake.private.add(priv);
    fake.banned.add(ban);
    fake.unknown.add(gone);
    fake.addPost(fine);
    const app = await start();
    const c = await app.customer('business');
    const hooks: Record<string, string> = {};
    for (const s of [priv, ban, gone, fine]) hooks[s] = await hook(app, c.auth, s);

    const expected = { [priv]: ['private', 'unavailable_403_private'], [ban]: ['banned', 'unavailable_404_banned'], [gone]: ['not_found', 'unavailable_302'], [fine]: ['ok', null] };
    for (const [s, [status, lastError]] of Object.entries(expected)) {
      const got = await until(() => coverage(app, c.auth, s.toUpperCase()), (d) => d.status !== 'pending', 10_000, `the first read of ${s}`);
      expect(got).toEqual({
        subreddit: s,
        tracked: true,
        status,
        last_read_at: status === 'ok' ? expect.stringMatching(ISO_MS) : null,
        last_error: lastError,
        consecutive_failures: status === 'ok' ? 0 : expect.any(Number),
        next_read_at: expect.stringMatching(ISO_MS),
        posts_unreachable: 0,
      });
    }
    // The webhook says it too, listed and alone.
    const list = await app.http().get('/v1/webhooks').set(c.auth);
    expect(Object.fromEntries(list.body.data.map((w: any) => [w.subreddit, w.source_status]))).toEqual({ [priv]: 'private', [ban]: 'banned', [gone]: 'not_found', [fine]: 'ok' });
    expect((await app.http().get(`/v1/webhooks/${hooks[ban]}`).set(c.auth)).body.data.source_status).toBe('banned');
    // One warning each, naming the status.
    for (const [s, words] of [
      [priv, 'private'],
      [ban, 'banned'],
      [gone, 'not found'],
    ]) {
      expect(app.logs.lines.filter((l) => l.startsWith('warn') && l.includes(`r/${s} is unavailable: ${words}`))).toHaveLength(1);
    }
    const scrape = await app.app.get(Metrics).scrape();
    for (const [status, n] of Object.entries({ ok: 1, private: 1, banned: 1, not_found: 1, pending: 0, throttled: 0 })) {
      expect(scrape).toContain(`trendhooks_subreddits{status="${status}"} ${n}`);
    }

    // The private one opens again: read at its next try, ok everywhere.
    const refusedAt = Date.now();
    fake.private.delete(priv);
    fake.addPost(priv);
    const back = await until(() => coverage(app, c.auth, priv), (d) => d.status === 'ok', 10_000, 'the private subreddit readable again');
    expect(back).toMatchObject({ last_error: null, consecutive_failures: 0 });
    expect(Date.parse(back.last_read_at)).toBeGreaterThanOrEqual(refusedAt - 1000);
    expect((await app.http().get(`/v1/webhooks/${hooks[priv]}`).set(c.auth)).body.data.source_status).toBe('ok');
    expect(app.logs.lines.some((l) => l.includes(`r/${priv} is readable again (it was private)`))).toBe(true);
    // The others stay as they were, retried alone and refused again.
    expect((await coverage(app, c.auth, ban)).status).toBe('banned');
  });

  it('answers untracked subreddits, refuses bad names and plans below Business', async () => {
    const app = await start();
    const c = await app.customer('enterprise');
    const never = sub();
    expect(await coverage(app, c.auth, never.toUpperCase())).toEqual({
      subreddit: never,
      tracked: false,
      status: 'untracked',
      last_read_at: null,
      last_error: null,
      consecutive_failures: 0,
      next_read_at: null,
      posts_unreachable: 0,
    });
    const bad = await app.http().get('/v1/subreddits/_x').set(c.auth);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'VALIDATION_ERROR', request_id: bad.headers['x-request-id'] });
    for (const plan of ['free', 'pro'] as const) {
      const low = await app.customer(plan);
      const res = await app.http().get(`/v1/subreddits/${never}`).set(low.auth);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('PLAN_REQUIRED');
    }
    expect((await app.http().get(`/v1/subreddits/${never}`)).status).toBe(401);
    // Tracked by configuration, not read yet (Reddit answers slowly here): pending.
    fake.delayMs = 3000;
    const configured = sub();
    await t!.close();
    t = undefined;
    const other = await start({ TRACKED_SUBREDDITS: configured });
    const d = await other.customer('business');
    expect(await coverage(other, d.auth, configured)).toMatchObject({ tracked: true, status: 'pending', last_read_at: null });
  });

  it("is tracked for the caller only: another customer's webhook on it shows nothing, nor its reads (issue 38, finding 5)", async () => {
    const app = await start();
    const [mine, theirs] = [await app.customer('business'), await app.customer('business')];
    const name = sub();
    fake.private.add(name);
    await hook(app, theirs.auth, name);
    // Read and refused for the customer that follows it…
    await until(() => coverage(app, theirs.auth, name), (d) => d.status === 'private', 10_000, 'the subreddit read for its follower');
    // …and nothing of it for another: not tracked, no status, no reads.
    expect(await coverage(app, mine.auth, name)).toEqual({ subreddit: name, tracked: false, status: 'untracked', last_read_at: null, last_error: null, consecutive_failures: 0, next_read_at: null, posts_unreachable: 0 });
    // Once it follows it too, it is told what is known.
    const own = await hook(app, mine.auth, name);
    expect(await coverage(app, mine.auth, name)).toMatchObject({ tracked: true, status: 'private', last_error: 'unavailable_403_private' });
    await app.http().delete(`/v1/webhooks/${own}`).set(mine.auth).expect(204);
    expect(await coverage(app, mine.auth, name)).toMatchObject({ tracked: false, status: 'untracked', last_read_at: null });
    expect(await coverage(app, theirs.auth, name)).toMatchObject({ tracked: true, status: 'private' });
  });

  it('notices a subreddit that turns private inside a multireddit (which leaves it out silently), keeps it out of groups while refused, and takes it back once readable', async () => {
    const [target, ...quiet] = [sub(), sub(), sub(), sub()];
    // The target posts often (30 in the last 10 s), the others not at all lately: all quiet enough to share a listing.
    for (let i = 0; i < 30; i++) fake.addPost(target, { ageMs: i * 300 });
    for (const s of quiet) fake.addPost(s, { ageMs: 3600_000 });
    const app = await start({}, { rateWindowMs: 10_000 });
    const c = await app.customer('business');
    for (const s of [target, ...quiet]) await hook(app, c.auth, s);
    const grouped = (from = 0) => fake.newRequests(target).filter((r) => r.n > from && r.subreddits.length > 1);
    await fake.waitUntil(() => grouped().length >= 2, 10_000, 'the target read in a multireddit');

    // Reddit makes it private: the multireddit simply stops listing its posts.
    fake.private.add(target);
    const turnedAt = fake.requests.length;
    const seen = await until(() => coverage(app, c.auth, target), (d) => d.status === 'private', 15_000, 'the private subreddit noticed');
    expect(seen.last_error).toBe('unavailable_403_private');
    // Found by a read of it alone.
    expect(fake.newRequests(target).some((r) => r.n > turnedAt && r.subreddits.length === 1)).toBe(true);
    expect(app.logs.lines.filter((l) => l.startsWith('warn') && l.includes(`r/${target} is unavailable: private`))).toHaveLength(1);
    const hookStatus = async () => (await app.http().get('/v1/webhooks').set(c.auth)).body.data.find((w: any) => w.subreddit === target).source_status;
    expect(await hookStatus()).toBe('private');

    // While refused it is tried alone, never in a group again.
    const refusedFrom = fake.requests.length;
    await fake.waitUntil((f) => f.newRequests(target).filter((r) => r.n > refusedFrom).length >= 3, 10_000, 'three more tries');
    expect(grouped(refusedFrom)).toEqual([]);
    expect((await coverage(app, c.auth, target)).status).toBe('private');

    // Public again: ok, and back in a multireddit.
    fake.private.delete(target);
    fake.addPost(target);
    await until(() => coverage(app, c.auth, target), (d) => d.status === 'ok', 10_000, 'the target readable again');
    expect(await hookStatus()).toBe('ok');
    const openedFrom = fake.requests.length;
    await fake.waitUntil(() => grouped(openedFrom).length >= 1, 10_000, 'the target in a multireddit again');
  }, 40_000);
});
