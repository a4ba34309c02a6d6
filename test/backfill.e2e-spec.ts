import { getDataSourceToken } from '@nestjs/typeorm';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import type { Role } from '../src/app.module';
import type { TrendParams } from '../src/trends/subreddit-trends';
import type { PollerTuning } from '../src/trends/trends.options';
import { existingDatabase, TestDatabase, testDatabases } from './support/databases';
import { FakeReddit } from './support/fake-reddit';
import { startTestApp, TestApp } from './support/app';
import { makeCert, Receiver, sleep, TestCert } from './support/receiver';
import { until } from './support/until';

const POLL_MS = 200;
// pageOverlapMs 0: a poll after the first reads one page (its newest post is younger than the last poll), so any
// request with `after` is a backfill's.
const TUNING: Partial<PollerTuning> = { backoffBaseMs: 300, backoffMaxMs: 2000, maxRetries: 1, shutdownGraceMs: 2000, quotaPerMinute: 100_000, pageOverlapMs: 0 };
/**
 * One-second surge buckets with a 120-bucket warm-up: a subreddit read for the first time without
 * its history stays silent for two minutes. A 30-bucket cooldown, so the history's own burst (five
 * minutes back) does not hold back a live one.
 */
const PARAMS: TrendParams = { surge: { bucketMs: 1000, warmupBuckets: 120, shortWindowBuckets: 0, windowBuckets: 1, cooldownBuckets: 30 }, latenessMs: 500 };
const HISTORY = 1000;
const HISTORY_BURST_AGE_MS = 300_000;

/**
 * 1,000 posts of history on the fake, the newest a second old: two posts a second from different
 * people for eight minutes, and a burst of 30 readers in one second five minutes ago.
 */
function addHistory(fake: FakeReddit, s: string): void {
  for (let i = 0; i < HISTORY - 30; i++) fake.addPost(s, { ageMs: 1000 + i * 500, title: `usual talk ${i % 13}`, author: `regular_${i}` });
  for (let k = 0; k < 30; k++) fake.addPost(s, { ageMs: HISTORY_BURST_AGE_MS + k, title: `old news ${k}`, author: `old_reader_${k}` });
}

/** A live burst: 80 people posting now. */
function addLiveBurst(fake: FakeReddit, s: string): void {
  for (let k = 0; k < 80; k++) fake.addPost(s, { title: `breaking news ${k}`, author: `live_reader_${k}` });
}

describe.each(testDatabases())('Backfill of a newly tracked subreddit on %s', (dbName, makeDb) => {
  let fake: FakeReddit;
  const apps: TestApp[] = [];
  const p = (n: number) => (dbName === 'postgres' ? `$${n}` : '?');

  async function start(opts: { env?: Record<string, string>; tuning?: Partial<PollerTuning>; role?: Role; shareWith?: TestApp } = {}): Promise<TestApp> {
    const db: TestDatabase = opts.shareWith
      ? existingDatabase(opts.shareWith.config.database)
      : makeDb();
    const t = await startTestApp(db, {
      env: { REDDIT_BASE_URL: fake.url, ...opts.env },
      patch: (c) => {
        c.trends.pollIntervalMs = POLL_MS;
      },
      role: opts.role ?? 'pipeline',
      poller: true,
      pollerTuning: { ...TUNING, ...opts.tuning },
      trendParams: PARAMS,
    });
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

  const sub = () => `bf${Math.random().toString(36).slice(2, 10)}`;
  const ds = (t: TestApp) => t.app.get<DataSource>(getDataSourceToken());
  const stored = async (t: TestApp, s: string) => Number((await ds(t).query(`SELECT COUNT(*) AS n FROM posts WHERE subreddit = ${p(1)}`, [s]))[0].n);
  /** The surge events stored for `s`: when their window ended. */
  const surges = async (t: TestApp, s: string): Promise<number[]> => {
    const rows: { payload: string }[] = await ds(t).query(`SELECT payload FROM events WHERE subreddit = ${p(1)} AND type = ${p(2)}`, [s, 'trends.surge']);
    return rows.map((r) => new Date((JSON.parse(r.payload) as { window_end: string }).window_end).getTime());
  };
  const backfillPages = (s: string) => fake.newRequests(s).filter((r) => r.path.includes('&after=t3_'));

  it('reads the history of a newly subscribed subreddit (1,000 posts, paged with after), announces nothing of it, and fires on a live surge at once', async () => {
    let cert: TestCert | undefined;
    let rx: Receiver | undefined;
    try {
      cert = makeCert();
      rx = await Receiver.start(cert);
      const s = sub();
      addHistory(fake, s);
      const t = await start({ role: 'all', env: { SSRF_ALLOW_CIDRS: '127.0.0.1/32', DELIVERY_CA_FILE: cert.caFile, DELIVERY_POLL_INTERVAL_MS: '50' } });
      const c = await t.customer('business');
      const subscribedAt = Date.now();
      const hook = await t.http().post('/v1/webhooks').set(c.auth).send({ url: rx.namedUrl('/surge'), event: 'trends.surge', subreddit: s, allow_nonstandard_port: true });
      expect(hook.status).toBe(201);

      await until(() => stored(t, s), (n) => n === HISTORY, 15_000, 'the history stored');
      // Ten pages of 100: the first without `after`, each next one after the last post of the one before.
      const pages = fake.newRequests(s).slice(0, 10);
      expect(pages[0].path).toBe(`/r/${s}/new.json?limit=100&raw_json=1`);
      for (const r of pages.slice(1)) expect(r.path).toMatch(new RegExp(`^/r/${s}/new\\.json\\?limit=100&raw_json=1&after=t3_[a-z0-9]+$`));
      expect(backfillPages(s)).toHaveLength(9);
      expect(new Set(pages.map((r) => r.path)).size).toBe(10);

      // Two minutes into the subscription by the detector's clock: a surge fires at once.
      addLiveBurst(fake, s);
      await rx.waitUntil((r) => r.length >= 1, 10_000, 'a surge delivery');
      const body = new Webhook(hook.body.data.secret).verify(rx.received[0].body, rx.received[0].headers as Record<string, string>) as any;
      expect(body).toMatchObject({ type: 'trends.surge', data: { subreddit: s } });
      expect(new Date(body.data.window_end).getTime()).toBeGreaterThan(subscribedAt);

      // The history's own burst (five minutes before the subscription) was learnt, never announced.
      await sleep(1500);
      const ends = await surges(t, s);
      expect(ends.length).toBeGreaterThanOrEqual(1);
      for (const end of ends) expect(end).toBeGreaterThan(subscribedAt);
      // Later polls read one page: the history is read once.
      expect(backfillPages(s)).toHaveLength(9);
    } finally {
      await rx?.close();
    }
  }, 45_000);

  it('without the backfill (backfillPages 1) the same subreddit reads one page and the same live surge meets a cold detector', async () => {
    const s = sub();
    addHistory(fake, s);
    const t = await start({ env: { TRACKED_SUBREDDITS: s }, tuning: { backfillPages: 1 } });
    await until(() => stored(t, s), (n) => n === 100, 15_000, 'the first page stored');
    addLiveBurst(fake, s);
    await until(() => stored(t, s), (n) => n === 180, 15_000, 'the live burst stored');
    await sleep(3000);
    expect(await surges(t, s)).toEqual([]);
    expect(backfillPages(s)).toHaveLength(0);
  }, 45_000);

  it('is backfilled by the process holding the lease only; another process taking the subreddit over warms from the stored history and reads it no more', async () => {
    const s = sub();
    addHistory(fake, s);
    // `other` runs first, not tracking s; `first` tracks s and backfills it.
    const other = await start({ env: { TRACKED_SUBREDDITS: sub() } });
    const first = await start({ env: { TRACKED_SUBREDDITS: s }, shareWith: other });
    await until(() => stored(other, s), (n) => n === HISTORY, 15_000, 'the history stored');
    expect(backfillPages(s)).toHaveLength(9);
    apps.splice(apps.indexOf(first), 1);
    await first.close();

    // A webhook makes `other` track s: its pipeline meets s for the first time, with its history in the database.
    const polled = fake.newRequests(s).length;
    const c = await other.customer('business');
    const since = Date.now();
    expect((await other.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/h', event: 'trends.surge', subreddit: s })).status).toBe(201);
    await fake.waitUntil((f) => f.newRequests(s).length >= polled + 2, 10_000, 'two polls by the other process');
    addLiveBurst(fake, s);
    const ends = await until(() => surges(other, s), (e) => e.length >= 1, 10_000, 'a surge in the other process');
    for (const end of ends) expect(end).toBeGreaterThan(since);
    expect(backfillPages(s)).toHaveLength(9);
  }, 45_000);
});
