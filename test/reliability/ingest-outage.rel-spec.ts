import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { scaledPollerTuning } from '../../src/trends/reddit/scaled-tuning';
import type { PollerTuning } from '../../src/trends/trends.options';
import { testDatabases } from '../support/databases';
import { FakeReddit, FakePost, FakeRequest } from '../support/fake-reddit';
import { startTestApp, TestApp } from '../support/app';
import { sleep } from '../support/receiver';
import { until } from '../support/until';

/**
 * Issue 43: a cold start, a hot subreddit and a Reddit outage in one run, against the fake with
 * Reddit's quota (every request counts, 429 past it). Time is scaled as in bench/ingest: a
 * simulated minute passes in MIN real ms, and every time constant of the poller is divided alike.
 */
const MIN = 2000;
const K = 60_000 / MIN;
/**
 * Reddit's quota, scaled down with the subreddits (1,000 queries per 10 minutes for 1,000
 * subreddits in the shape): 20 a minute, of which live polling takes about a third.
 */
const QUOTA_PER_MIN = 20;
const QUIET = 120;
/** Posts a simulated minute in the hot subreddit. */
const HOT_RATE = 120;
const TUNING: Partial<PollerTuning> = { ...scaledPollerTuning(K, QUOTA_PER_MIN), shutdownGraceMs: 2000 };

describe.each(testDatabases())('ingest across a cold start and an outage on %s', (dbName, makeDb) => {
  let fake: FakeReddit;
  let app: TestApp | undefined;

  beforeEach(async () => {
    fake = await FakeReddit.start();
    fake.quota = { perWindow: QUOTA_PER_MIN * 10, windowMs: 10 * MIN };
  });
  afterEach(async () => {
    await app?.close();
    await fake.close();
  });

  it('loses no post of a hot subreddit, stays within the quota and reads every subreddit within an interval of Reddit answering again', async () => {
    const hot = 'aahot';
    const quiet = Array.from({ length: QUIET }, (_, i) => `quiet${String(i).padStart(3, '0')}`);
    for (const q of quiet) fake.addPost(q, { ageMs: 3600_000 });
    const hotPosts: FakePost[] = [];
    let gen: NodeJS.Timeout | undefined;
    // Posts at HOT_RATE by the wall clock, created at their due times even when the event loop lags.
    const generate = () => {
      const from = Date.now();
      let n = 0;
      gen = setInterval(() => {
        const now = Date.now();
        for (const due = Math.floor(((now - from) * HOT_RATE) / MIN); n < due; n++) hotPosts.push(fake.addPost(hot, { ageMs: now - (from + (n * MIN) / HOT_RATE) }));
      }, 20);
    };
    let down = false;
    fake.behaviour = () => (down ? { status: 503, body: '<html>down</html>' } : undefined);
    try {
      app = await startTestApp(makeDb(), {
        env: { REDDIT_BASE_URL: fake.url, TRACKED_SUBREDDITS: [hot, ...quiet].join(',') },
        patch: (c) => (c.trends.pollIntervalMs = MIN),
        role: 'pipeline',
        poller: true,
        pollerTuning: TUNING,
      });
      generate();
      // The cold start: every subreddit read once.
      const listed = () => new Set(fake.newRequests().filter((r) => r.status === 200).flatMap((r) => r.subreddits));
      await fake.waitUntil(() => listed().size === QUIET + 1, 40 * MIN, 'every first read');
      await sleep(2 * MIN);
      // A 2-minute outage: every request gets 503.
      down = true;
      const outageFrom = fake.requests.length;
      await sleep(2 * MIN);
      down = false;
      const during = fake.apiRequests().filter((r) => r.n > outageFrom && r.status === 503);
      const back = Date.now();
      await sleep(3 * MIN);
      clearInterval(gen);
      await sleep(2 * MIN);

      const ds = app.app.get<DataSource>(getDataSourceToken());
      const stored = async () => Number((await ds.query(`SELECT COUNT(*) AS n FROM posts WHERE subreddit = ${dbName === 'postgres' ? '$1' : '?'}`, [hot]))[0].n);
      // Every post of the hot subreddit, through the cold start and the outage, is stored.
      await until(stored, (n) => n >= hotPosts.length, 3 * MIN, `all ${hotPosts.length} posts of r/${hot} stored`);

      // Requests never ran into the quota: no 429, at most the quota in any window.
      const api = fake.apiRequests();
      expect(api.filter((r) => r.status === 429)).toHaveLength(0);
      expect(maxInWindow(api, 10 * MIN)).toBeLessThanOrEqual(QUOTA_PER_MIN * 10);
      // The outage was probed, client-wide, with exponential backoff: not every poll retrying on its own.
      expect(during.length).toBeLessThanOrEqual(12);
      // Once Reddit answered again, every subreddit was listed within one poll interval.
      const firstOk = api.find((r) => r.at >= back && r.status === 200)!;
      const readAgain = new Map<string, number>();
      for (const r of fake.newRequests()) if (r.at >= firstOk.at && r.status === 200) for (const sub of r.subreddits) if (!readAgain.has(sub)) readAgain.set(sub, r.at - firstOk.at);
      expect(readAgain.size).toBe(QUIET + 1);
      expect(Math.max(...readAgain.values())).toBeLessThanOrEqual(1.5 * MIN);
    } finally {
      clearInterval(gen);
    }
  }, 240_000);
});

/** The most requests that started within any `windowMs`. */
function maxInWindow(reqs: FakeRequest[], windowMs: number): number {
  let most = 0;
  for (let i = 0, j = 0; j < reqs.length; j++) {
    while (reqs[j].at - reqs[i].at >= windowMs) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}
