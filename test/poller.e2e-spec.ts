import { getDataSourceToken } from '@nestjs/typeorm';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { Metrics } from '../src/metrics/metrics.service';
import { TrendsPoller } from '../src/trends/reddit/trends.poller';
import type { PollerTuning } from '../src/trends/trends.options';
import type { TrendParams } from '../src/trends/subreddit-trends';
import type { Role } from '../src/app.module';
import { existingDatabase, TestDatabase, testDatabases } from './support/databases';
import { FakeReddit, FakeRequest } from './support/fake-reddit';
import { startTestApp, TestApp } from './support/app';
import { makeCert, Receiver, sleep, TestCert } from './support/receiver';
import { until } from './support/until';

const UA = /^node:trendhooks:\d+\.\d+\.\d+ \(\+https:\/\/github\.com\/\S+; set REDDIT_USER_AGENT to your own\)$/;
/** Short enough that a test sees several polls in a second or two. */
const POLL_MS = 200;
// A quota far above what polls every 200 ms cost, so re-reads are never held back by the budget here.
const TUNING: Partial<PollerTuning> = { backoffBaseMs: 300, backoffMaxMs: 2000, maxRetries: 1, shutdownGraceMs: 2000, quotaPerMinute: 100_000 };

const gap = (a: FakeRequest, b: FakeRequest) => b.at - a.at;

describe.each(testDatabases())('Reddit poller on %s', (dbName, makeDb) => {
  let fake: FakeReddit;
  const apps: TestApp[] = [];

  /** An app whose poller reads the fake; `shareWith` puts it on another app's database. */
  async function start(
    opts: { env?: Record<string, string>; tuning?: Partial<PollerTuning>; role?: Role; trendParams?: TrendParams; shareWith?: TestApp; concurrency?: number } = {},
  ): Promise<TestApp> {
    const db: TestDatabase = opts.shareWith
      ? existingDatabase(opts.shareWith.config.database)
      : makeDb();
    const t = await startTestApp(db, {
      env: { REDDIT_BASE_URL: fake.url, ...opts.env },
      patch: (c) => {
        c.trends.pollIntervalMs = POLL_MS;
        if (opts.concurrency) c.trends.pollConcurrency = opts.concurrency;
      },
      role: opts.role ?? 'pipeline',
      poller: true,
      pollerTuning: { ...TUNING, ...opts.tuning },
      trendParams: opts.trendParams,
    });
    // Closed in reverse order, so an app sharing a database closes before the one that drops it.
    apps.unshift(t);
    return t;
  }

  beforeEach(async () => {
    fake = await FakeReddit.start();
  });
  afterEach(async () => {
    for (const t of apps.splice(0)) await t.close();
    await fake.close();
  });

  const sub = () => `poll${Math.random().toString(36).slice(2, 10)}`;

  async function storedPosts(t: TestApp, subreddit: string): Promise<any[]> {
    const c = await t.customer('free');
    const res = await t.http().get(`/v1/subreddits/${subreddit}/posts?limit=25`).set(c.auth);
    expect(res.status).toBe(200);
    return res.body.data;
  }

  async function source(t: TestApp, subreddit: string): Promise<any> {
    const ds = t.app.get<DataSource>(getDataSourceToken());
    const rows = await ds.query(`SELECT * FROM trend_sources WHERE subreddit = ${dbName === 'postgres' ? '$1' : '?'}`, [subreddit]);
    return rows[0];
  }

  it('polls the subreddits webhooks subscribe to: new posts stored once, scores followed by re-reads, a descriptive User-Agent', async () => {
    const s = sub();
    const [a, b] = [fake.addPost(s, { ageMs: 60_000 }), fake.addPost(s, { ageMs: 30_000 })];
    fake.addPost(s, { ageMs: 10_000, title: 'third' });
    const t = await start({ tuning: { rereadMinGapMs: 0 } });
    const c = await t.customer('business');
    const created = await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/h', event: 'trends.surge', subreddit: s.toUpperCase() });
    expect(created.status).toBe(201);

    const first = await until(() => storedPosts(t, s), (p) => p.length === 3, 10_000, 'three stored posts');
    expect(first.map((p) => p.id).sort()).toEqual([a.id, b.id, first.find((p) => p.title === 'third').id].sort());
    expect(first.find((p) => p.id === a.id)).toMatchObject({ subreddit: s, score: 1, permalink: expect.stringMatching(/^https:\/\/www\.reddit\.com\/r\//) });

    // Polled again and again, still three posts: the store dedupes by id.
    await fake.waitUntil((f) => f.newRequests(s).length >= 4, 10_000, 'four polls');
    expect(await storedPosts(t, s)).toHaveLength(3);

    // Post a scrolls off /new and grows: only a re-read by id can see it.
    a.hiddenFromNew = true;
    a.score = 99;
    a.num_comments = 12;
    await until(() => storedPosts(t, s), (p) => p.find((x) => x.id === a.id)?.score === 99, 10_000, 'the re-read score');
    const reread = fake.requests.find((r) => r.path.startsWith('/by_id/') && r.path.includes(`t3_${a.id}`));
    expect(reread?.path).toMatch(/^\/by_id\/t3_[a-z0-9]+(,t3_[a-z0-9]+)*\.json\?raw_json=1$/);
    expect((await storedPosts(t, s)).find((x) => x.id === a.id)).toMatchObject({ score: 99, num_comments: 12 });

    expect(fake.newRequests(s)[0].path).toBe(`/r/${s}/new.json?limit=100&raw_json=1`);
    for (const r of fake.requests) {
      expect(r.headers['user-agent']).toMatch(UA);
      expect(r.headers.authorization).toBeUndefined();
    }
    // The poller keeps polling: a read may hold the lease at any instant, so wait for one between reads.
    const idle = await until(() => source(t, s), (r) => r.lease_until === null, 10_000, 'the lease released between reads');
    expect(idle).toMatchObject({ last_error: null, consecutive_failures: 0, lease_until: null });
  });

  it('polls nothing with REDDIT_POLLING=off, though a webhook subscribes and the role polls', async () => {
    const s = sub();
    fake.addPost(s, { ageMs: 10_000 });
    const t = await start({ env: { REDDIT_POLLING: 'off' } });
    const c = await t.customer('business');
    const created = await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/h', event: 'trends.surge', subreddit: s });
    expect(created.status).toBe(201);
    // The first test's app has polled four times by then.
    await new Promise((r) => setTimeout(r, 20 * POLL_MS));
    expect(fake.requests).toEqual([]);
  });

  it('uses app-only OAuth when a client id and secret are configured: one token, sent as a bearer', async () => {
    const s = sub();
    fake.addPost(s);
    fake.credentials = { id: 'my-client', secret: 'my-secret' };
    const t = await start({ env: { REDDIT_CLIENT_ID: 'my-client', REDDIT_CLIENT_SECRET: 'my-secret', TRACKED_SUBREDDITS: s } });
    await fake.waitUntil((f) => f.newRequests(s).length >= 3, 10_000, 'three polls');
    expect(fake.tokens).toEqual(['fake-token-1']);
    const tokenReq = fake.requests.filter((r) => r.path === '/api/v1/access_token');
    expect(tokenReq).toHaveLength(1);
    expect(tokenReq[0]).toMatchObject({ method: 'POST', body: 'grant_type=client_credentials' });
    expect(tokenReq[0].headers['user-agent']).toMatch(UA);
    for (const r of fake.apiRequests()) expect(r.headers.authorization).toBe('bearer fake-token-1');
    expect(await storedPosts(t, s)).toHaveLength(1);
  });

  it('waits for the reset when X-Ratelimit-Remaining reaches 0', async () => {
    const s = sub();
    fake.addPost(s);
    let spent = false;
    fake.behaviour = (r) => {
      if (spent || !r.path.startsWith('/r/')) return undefined;
      spent = true;
      return { headers: { 'x-ratelimit-used': '100', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' }, body: JSON.stringify({ kind: 'Listing', data: { after: null, children: [] } }) };
    };
    await start({ env: { TRACKED_SUBREDDITS: s } });
    await fake.waitUntil((f) => f.apiRequests().length >= 3, 10_000, 'three requests');
    const [r1, r2, r3] = fake.apiRequests();
    expect(gap(r1, r2)).toBeGreaterThanOrEqual(950);
    // Back to the poll interval once the window reset.
    expect(gap(r2, r3)).toBeLessThan(900);
  });

  it('backs off on 429 (Retry-After) and 503 (exponential), then stores the posts', async () => {
    const s = sub();
    fake.addPost(s);
    fake.behaviour = (r) => (r.n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : r.n === 2 ? { status: 503 } : undefined);
    const t = await start({ env: { TRACKED_SUBREDDITS: s }, tuning: { maxRetries: 3 } });
    await until(() => storedPosts(t, s), (p) => p.length === 1, 10_000, 'the stored post');
    const [r1, r2, r3] = fake.apiRequests();
    expect(gap(r1, r2)).toBeGreaterThanOrEqual(950);
    // Equal jitter on a 300 ms base: at least 150 ms.
    expect(gap(r2, r3)).toBeGreaterThanOrEqual(140);
    expect(await source(t, s)).toMatchObject({ last_error: null, consecutive_failures: 0 });
  });

  it('survives a 500 that outlasts the retries: the poll fails, is recorded, and the next one succeeds', async () => {
    const s = sub();
    fake.addPost(s);
    fake.behaviour = (r) => (r.n <= 2 ? { status: 500, body: 'oops' } : undefined);
    const t = await start({ env: { TRACKED_SUBREDDITS: s } });
    const failed = await until(() => source(t, s), (row) => Number(row?.consecutive_failures) === 1, 10_000, 'a recorded failure');
    expect(failed.last_error).toBe('http_500');
    await until(() => storedPosts(t, s), (p) => p.length === 1, 10_000, 'the stored post');
    const ok = await until(() => source(t, s), (row) => Number(row?.consecutive_failures) === 0 && row.last_polled_at !== null, 10_000, 'a recorded success');
    expect(ok.last_error).toBeNull();
    expect(t.logs.lines.some((l) => l.startsWith('warn') && l.includes(`poll of r/${s} failed`) && l.includes('500'))).toBe(true);
    expect(await t.app.get(Metrics).scrape()).toContain(`trendhooks_poller_errors_total{subreddit="${s}"} 1`);
  });

  it('treats a redirect (unknown subreddit) and a 403 (private) as unavailable: never followed, logged once, backed off long', async () => {
    const [gone, secret, fine] = [sub(), sub(), sub()];
    fake.unknown.add(gone);
    fake.private.add(secret);
    fake.addPost(fine);
    const t = await start({ env: { TRACKED_SUBREDDITS: `${gone},${secret},${fine}` } });
    await fake.waitUntil((f) => f.newRequests(fine).length >= 5, 10_000, 'five polls of the healthy subreddit');
    expect(fake.newRequests(gone)).toHaveLength(1);
    expect(fake.newRequests(secret)).toHaveLength(1);
    expect(fake.requests.some((r) => r.path.startsWith('/subreddits/'))).toBe(false);
    // Reddit's reason is kept: 403 alone cannot tell private from quarantined.
    for (const [s, lastError] of [
      [gone, 'unavailable_302'],
      [secret, 'unavailable_403_private'],
    ] as const) {
      const row = await source(t, s);
      expect(row).toMatchObject({ last_error: lastError, consecutive_failures: 1 });
      expect(Number(row.next_poll_at) - Date.now()).toBeGreaterThan(25 * 60_000);
      expect(t.logs.lines.filter((l) => l.startsWith('warn') && l.includes(`r/${s} is unavailable`))).toHaveLength(1);
    }
    expect(await storedPosts(t, fine)).toHaveLength(1);
  });

  it('reads quiet subreddits together in multireddit listings once it knows them, and re-reads their posts 100 ids a call', async () => {
    const subs = Array.from({ length: 5 }, sub);
    for (const s of subs) for (let i = 0; i < 3; i++) fake.addPost(s, { ageMs: 3600_000 * (i + 1) });
    const t = await start({ env: { TRACKED_SUBREDDITS: subs.join(',') }, tuning: { maxBatchSubreddits: 3, rereadMinGapMs: 0 } });
    // First sight: each alone (that is where Reddit says whether it serves a subreddit).
    for (const s of subs) await fake.waitUntil((f) => f.newRequests(s).length >= 1, 10_000, `the first read of ${s}`);
    for (const s of subs) expect(fake.newRequests(s)[0].subreddits).toEqual([s]);
    // Then in groups of at most three: two listings per round for the five.
    await fake.waitUntil((f) => subs.every((s) => f.newRequests(s).filter((r) => r.subreddits.length > 1).length >= 3), 10_000, 'three grouped polls of each');
    const grouped = fake.newRequests().filter((r) => r.subreddits.length > 1);
    for (const r of grouped) {
      expect(r.subreddits.length).toBeLessThanOrEqual(3);
      expect(r.path).toMatch(/^\/r\/poll[a-z0-9]+(\+poll[a-z0-9]+)+\/new\.json\?limit=100&raw_json=1$/);
    }
    // The posts stay stored once each, and a post that scrolled off is found again through /by_id.
    const hidden = [...fake.posts.values()].find((p) => p.subreddit === subs[0])!;
    hidden.hiddenFromNew = true;
    hidden.score = 77;
    await until(() => storedPosts(t, subs[0]), (p) => p.find((x) => x.id === hidden.id)?.score === 77, 10_000, 'the re-read score');
    for (const r of fake.requests.filter((x) => x.path.startsWith('/by_id/'))) {
      expect(decodeURIComponent(r.path).split(',').length).toBeLessThanOrEqual(100);
    }
    for (const s of subs) expect(await storedPosts(t, s)).toHaveLength(3);
    expect(fake.overlaps).toEqual([]);
  });

  it('pages a listing with `after` back to the last poll, so a burst of more than 100 posts between polls, or during an outage, is stored whole', async () => {
    const [busy, quiet] = [sub(), sub()];
    fake.addPost(busy, { ageMs: 120_000 });
    fake.addPost(quiet, { ageMs: 120_000 });
    let down = false;
    fake.behaviour = (r) => (down && r.path.startsWith('/r/') ? { status: 503, body: 'down' } : undefined);
    const t = await start({ env: { TRACKED_SUBREDDITS: `${busy},${quiet}` }, tuning: { pageOverlapMs: 0 } });
    await until(() => storedPosts(t, busy), (p) => p.length === 1, 10_000, 'the first post');
    await fake.waitUntil((f) => f.newRequests(quiet).length >= 2, 10_000, 'a second poll');

    // An outage, during which 250 posts arrive in one subreddit and 3 in the other.
    down = true;
    const failedBefore = fake.requests.length;
    await fake.waitUntil((f) => f.requests.length >= failedBefore + 2, 10_000, 'failed polls');
    const burst = Array.from({ length: 250 }, (_, i) => fake.addPost(busy, { title: `burst ${i}` }));
    for (let i = 0; i < 3; i++) fake.addPost(quiet, { title: `quiet ${i}` });
    const pagesFrom = fake.requests.length;
    down = false;

    const ds = t.app.get<DataSource>(getDataSourceToken());
    const count = async (s: string) => Number((await ds.query(`SELECT COUNT(*) AS n FROM posts WHERE subreddit = ${dbName === 'postgres' ? '$1' : '?'}`, [s]))[0].n);
    await until(() => count(busy), (n) => n === 251, 20_000, 'all 251 posts of the busy subreddit');
    await until(() => count(quiet), (n) => n === 4, 10_000, 'all 4 posts of the quiet subreddit');
    // It paged: after=… on the requests that read past the first 100.
    const paged = fake.newRequests().filter((r) => r.n > pagesFrom && r.path.includes('&after=t3_'));
    expect(paged.length).toBeGreaterThanOrEqual(2);
    expect(burst.every((p) => p.id)).toBe(true);
  }, 40_000);

  it('spreads its polls over the OAuth clients of REDDIT_CLIENTS, each with its own token', async () => {
    const subs = Array.from({ length: 4 }, sub);
    for (const s of subs) fake.addPost(s);
    fake.credentials = { id: 'one', secret: 's1' };
    const issued: string[] = [];
    fake.behaviour = (r) => {
      if (r.path !== '/api/v1/access_token') return undefined;
      const [id, secret] = Buffer.from(String(r.headers.authorization).replace(/^Basic /, ''), 'base64').toString().split(':');
      if (!((id === 'one' && secret === 's1') || (id === 'two' && secret === 's2'))) return { status: 401, body: '{}' };
      const token = `tok-${id}`;
      issued.push(token);
      fake.tokens.push(token);
      return { body: JSON.stringify({ access_token: token, token_type: 'bearer', expires_in: 86400 }) };
    };
    await start({ env: { REDDIT_CLIENTS: 'one:s1,two:s2', TRACKED_SUBREDDITS: subs.join(',') }, concurrency: 2 });
    await fake.waitUntil((f) => subs.every((s) => f.newRequests(s).length >= 3), 10_000, 'three polls of each');
    expect(issued.sort()).toEqual(['tok-one', 'tok-two']);
    const used = new Set(fake.apiRequests().map((r) => r.headers.authorization));
    expect(used).toEqual(new Set(['bearer tok-one', 'bearer tok-two']));
  });

  it("keeps Reddit's deletion rule: posts removed or deleted on Reddit, or no longer served, are purged on the re-reads; a deleted author is dropped; nothing past the retention is kept", async () => {
    const s = sub();
    const [removed, selfDeleted, vanished, orphaned, kept] = [0, 1, 2, 3, 4].map((i) => fake.addPost(s, { ageMs: 60_000 + i * 1000, author: `author_${i}`, selftext: `text ${i}` }));
    const ancient = fake.addPost(s, { ageMs: 3 * 86_400_000, title: 'from three days ago' });
    const t = await start({ env: { TRACKED_SUBREDDITS: s, POSTS_RETENTION_DAYS: '2' }, tuning: { rereadMinGapMs: 0, retentionSweepMs: 300 } });
    const ds = t.app.get<DataSource>(getDataSourceToken());
    const q = (sql: string, ...params: unknown[]) => ds.query(dbName === 'postgres' ? sql.replace(/\?/g, (_m, i: number) => `$${sql.slice(0, i).split('?').length}`) : sql, params);
    const ids = async () => ((await q('SELECT id FROM posts WHERE subreddit = ? ORDER BY id', s)) as { id: string }[]).map((r) => r.id);
    await until(ids, (x) => x.length === 5, 10_000, 'five stored posts');
    // Three days old: beyond the 2-day retention, never stored although the listing shows it.
    expect(await ids()).not.toContain(ancient.id);

    // Then, on Reddit: a moderator removes one, an author deletes a post, another post disappears
    // from Reddit altogether, an author deletes the account. All scroll off /new: only re-reads see them.
    for (const p of [removed, selfDeleted, vanished, orphaned, kept]) p.hiddenFromNew = true;
    removed.removed_by_category = 'moderator';
    selfDeleted.author = '[deleted]';
    selfDeleted.selftext = '[deleted]';
    fake.posts.delete(vanished.id);
    orphaned.author = '[deleted]';
    await until(ids, (x) => x.length === 2, 10_000, 'the removed posts purged');
    expect(await ids()).toEqual([orphaned.id, kept.id].sort());
    const authors = (await q('SELECT id, author, author_key FROM posts WHERE subreddit = ? ORDER BY id', s)) as { id: string; author: string; author_key: string }[];
    expect(authors.find((r) => r.id === orphaned.id)).toMatchObject({ author: '[deleted]', author_key: '[deleted]' });
    expect(authors.find((r) => r.id === kept.id)).toMatchObject({ author: 'author_4' });
    expect(t.logs.lines.some((l) => l.includes('posts removed or deleted on Reddit'))).toBe(true);

    // A post stored earlier and now past the retention is deleted by the poller's sweep.
    const old = Date.now() - 5 * 86_400_000;
    await q(
      'INSERT INTO posts (id, subreddit, author, author_key, title, selftext, url, permalink, score, num_comments, created_at, first_seen_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      'zzold1', s, 'a', 'a', 't', '', 'https://x', '/r/x/comments/zzold1/', 1, 0, old, old, old,
    );
    await until(ids, (x) => !x.includes('zzold1'), 10_000, 'the old post deleted');
    expect(await ids()).toEqual([orphaned.id, kept.id].sort());
  });

  it('turns a burst of posts on Reddit into a trends.surge delivered to a webhook', async () => {
    let cert: TestCert | undefined;
    let rx: Receiver | undefined;
    try {
      cert = makeCert();
      rx = await Receiver.start(cert);
      const s = sub();
      fake.addPost(s, { title: 'a quiet start' });
      const t = await start({
        role: 'all',
        env: { SSRF_ALLOW_CIDRS: '127.0.0.1/32', DELIVERY_CA_FILE: cert.caFile, DELIVERY_POLL_INTERVAL_MS: '50' },
        // One-second buckets and a short warm-up, so the whole story takes seconds.
        trendParams: { surge: { bucketMs: 1000, warmupBuckets: 3, shortWindowBuckets: 0, windowBuckets: 1, cooldownBuckets: 600 }, latenessMs: 500 },
      });
      const c = await t.customer('business');
      const hook = await t.http().post('/v1/webhooks').set(c.auth).send({ url: rx.namedUrl('/surge'), event: 'trends.surge', subreddit: s, allow_nonstandard_port: true });
      expect(hook.status).toBe(201);

      await until(() => storedPosts(t, s), (p) => p.length === 1, 10_000, 'the first post');
      await sleep(4500); // quiet buckets close: the detector warms up on them
      expect(rx.received).toHaveLength(0);
      // Many people posting, as a real surge goes: one account's reposts count once a bucket.
      for (let i = 0; i < 15; i++) fake.addPost(s, { title: `breaking news number ${i}`, author: `reader_${i}` });

      await rx.waitUntil((r) => r.length >= 1, 15_000, 'a surge delivery');
      const body = new Webhook(hook.body.data.secret).verify(rx.received[0].body, rx.received[0].headers as Record<string, string>) as any;
      expect(body).toMatchObject({ type: 'trends.surge', data: { subreddit: s, webhook_id: hook.body.data.id, event_id: expect.stringMatching(/^evt_/) } });
      expect(body.data.count).toBeGreaterThanOrEqual(5);
      expect(body.data.score).toBeGreaterThanOrEqual(body.data.threshold);
    } finally {
      await rx?.close();
    }
  }, 40_000);

  if (dbName === 'postgres') {
    it('never lets two poller processes on one database poll the same subreddit at once', async () => {
      const subs = Array.from({ length: 6 }, sub);
      for (const s of subs) fake.addPost(s);
      fake.delayMs = 60;
      const env = { TRACKED_SUBREDDITS: subs.join(',') };
      const one = await start({ env, concurrency: 2 });
      const two = await start({ env, concurrency: 2, shareWith: one });
      await fake.waitUntil((f) => subs.every((s) => f.newRequests(s).length >= 6), 20_000, 'six polls of every subreddit');
      expect(fake.overlaps).toEqual([]);

      // A stopped poller hands its subreddits back at once.
      const owner = two.app.get(TrendsPoller).owner;
      apps.splice(apps.indexOf(two), 1);
      await two.close();
      const ds = one.app.get<DataSource>(getDataSourceToken());
      expect(await ds.query('SELECT subreddit FROM trend_sources WHERE lease_owner = $1', [owner])).toEqual([]);
      const before = fake.requests.length;
      await fake.waitUntil((f) => subs.every((s) => f.newRequests(s).some((r) => r.n > before)), 10_000, 'the survivor polling every subreddit');
      expect(fake.overlaps).toEqual([]);
    }, 60_000);
  }
});
