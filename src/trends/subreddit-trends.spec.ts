import { BucketWindow, ObservedPost, SubredditTrends } from './subreddit-trends';
import { toTrendEvent, trendEventId } from './trend-event';

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 5, 0, 0, 0); // a Monday, on the bucket grid

/** A rising detection 30 min after T0 (window from its previous read 15 min earlier). */
function risingDetection(subreddit: string, threshold: number) {
  return {
    kind: 'trends.rising' as const,
    postId: 'abc',
    permalink: `/r/${subreddit}/comments/abc/x/`,
    title: 'x',
    createdUtcMs: T0,
    ageMinutes: 30,
    scorePerHour: 100,
    commentsPerHour: 10,
    growthPerHour: 120,
    baselinePerHour: 5,
    zScore: 4.2,
    threshold,
    score: 50,
    numComments: 5,
    sinceMs: T0 + 15 * MIN,
    observedAt: T0 + 30 * MIN,
  };
}

describe('BucketWindow', () => {
  it('closes buckets in order, gaps included, once the watermark passes end + lateness', () => {
    const w = new BucketWindow<string>(5 * MIN, MIN);
    w.add(T0 + 1000, 'a');
    w.add(T0 + 11 * MIN, 'b');
    expect([...w.advance(T0 + 5 * MIN)]).toEqual([]); // lateness not yet over
    expect([...w.advance(T0 + 16 * MIN)]).toEqual([
      { bucketStart: T0, items: ['a'] },
      { bucketStart: T0 + 5 * MIN, items: [] },
      { bucketStart: T0 + 10 * MIN, items: ['b'] },
    ]);
    expect([...w.advance(T0 + 16 * MIN)]).toEqual([]);
  });

  it('drops and counts a post for a bucket that is already closed', () => {
    const w = new BucketWindow<string>(5 * MIN, 0);
    w.add(T0 + 6 * MIN, 'x');
    Array.from(w.advance(T0 + 10 * MIN));
    expect(w.add(T0 + 7 * MIN, 'late')).toBe(false);
    expect(w.add(T0 + 3 * MIN, 'later')).toBe(false);
    expect(w.late).toBe(2);
    expect(w.add(T0 + 11 * MIN, 'fine')).toBe(true);
  });

  it('handles timestamps before 1970 on the grid', () => {
    const w = new BucketWindow<string>(5 * MIN, 0);
    w.add(-1, 'neg');
    expect([...w.advance(1)]).toEqual([{ bucketStart: -5 * MIN, items: ['neg'] }]);
  });
});

function post(i: number, createdAtMs: number, title = `post number ${i}`, author = `user${i % 50}`): ObservedPost {
  return { id: `p${i.toString(36)}`, createdAtMs, author, title, selftext: '', permalink: `/r/t/comments/p${i}/`, score: 1, numComments: 0 };
}

/** A steady subreddit (4 posts / 5 min) for `buckets` buckets, then `burst` posts in one bucket. */
function feed(st: SubredditTrends, buckets: number, burst: number) {
  const detections = [];
  let n = 0;
  for (let b = 0; b < buckets; b++) {
    const posts = Array.from({ length: 4 }, (_, k) => post(n++, T0 + b * 5 * MIN + k * MIN, `steady talk ${n % 7} about usual things`));
    detections.push(...st.observe(posts, new Set(posts.map((p) => p.id)), T0 + (b + 1) * 5 * MIN));
    detections.push(...st.advance());
  }
  const at = T0 + buckets * 5 * MIN;
  const spike = Array.from({ length: burst }, (_, k) => post(n++, at + (k % 5) * MIN, `quantum breakthrough announced ${k}`, `reader${k}`));
  detections.push(...st.observe(spike, new Set(spike.map((p) => p.id)), at + 5 * MIN));
  detections.push(...st.advance(at + 20 * MIN));
  return detections;
}

/** 400 steady buckets, then `burst` posts by `author(k)` titled `title(k)` in one bucket, observed but that bucket not yet closed. */
function observeBurst(st: SubredditTrends, burst: number, author: (k: number) => string, title: (k: number) => string) {
  let n = 0;
  for (let b = 0; b < 400; b++) {
    const posts = Array.from({ length: 4 }, (_, k) => post(n++, T0 + b * 5 * MIN + k * MIN, `steady talk ${n % 7} about usual things`));
    st.observe(posts, new Set(posts.map((p) => p.id)), T0 + (b + 1) * 5 * MIN);
    st.advance();
  }
  const at = T0 + 400 * 5 * MIN;
  const spike = Array.from({ length: burst }, (_, k) => post(n++, at + (k % 5) * MIN, title(k), author(k)));
  const detections = st.observe(spike, new Set(spike.map((p) => p.id)), at + 5 * MIN);
  return { spike, at, detections };
}

/** `feed` with the burst's posts written by `author(k)`. */
function feedBurst(st: SubredditTrends, burst: number, author: (k: number) => string, title: (k: number) => string) {
  const { at, detections } = observeBurst(st, burst, author, title);
  detections.push(...st.advance(at + 40 * MIN));
  return detections.filter((d) => d.kind !== 'trends.rising');
}

const news = (k: number) => `quantum breakthrough announced ${['today', 'in labs', 'by physicists', 'finally'][k % 4]} ${k}`;

describe('SubredditTrends spam', () => {
  it('fires surge and velocity on a burst from many authors, saying how many', () => {
    const loud = feedBurst(new SubredditTrends('t'), 250, (k) => `reader${k}`, news);
    const surge = loud.find((d) => d.kind === 'trends.surge');
    expect(surge && surge.distinctAuthors).toBeGreaterThanOrEqual(250);
    const velocity = loud.find((d) => d.kind === 'trends.velocity');
    // It fires at the first step with the evidence (the burst's first 2 minutes), every source an author.
    expect(velocity && velocity.distinctAuthors).toBeGreaterThanOrEqual(5);
    expect(velocity && velocity.distinctAuthors).toBe(velocity && velocity.count);
    expect(velocity && velocity.firstPostAt).toBe(T0 + 400 * 5 * MIN);
  });

  it('fires neither on the same burst from one or two authors', () => {
    expect(feedBurst(new SubredditTrends('t'), 250, (k) => (k % 2 ? 'spam1' : 'spam2'), news)).toEqual([]);
    expect(feedBurst(new SubredditTrends('t'), 250, () => 'spam1', news)).toEqual([]);
  });

  it('fires neither on one title reposted by deleted accounts, but does on different titles of deleted accounts', () => {
    expect(feedBurst(new SubredditTrends('t'), 250, () => '[deleted]', () => 'Quantum breakthrough announced!!')).toEqual([]);
    const varied = feedBurst(new SubredditTrends('t'), 250, () => '[deleted]', (k) => `quantum breakthrough ${k.toString(36)}x${k}`);
    expect(varied.map((d) => d.kind)).toEqual(expect.arrayContaining(['trends.surge', 'trends.velocity']));
    // The window's steady posts have authors; the burst's keywords have none.
    expect(varied.find((d) => d.kind === 'trends.velocity')).toMatchObject({ distinctAuthors: 0 });
  });
});

describe('SubredditTrends.forget (posts removed on Reddit)', () => {
  const steadyThenBurst = (st: SubredditTrends, burst: number) => observeBurst(st, burst, (k) => `reader${k}`, news);

  it('takes removed posts out of their open buckets: a burst removed before its bucket closes fires nothing', () => {
    const st = new SubredditTrends('t');
    const { spike, at } = steadyThenBurst(st, 250);
    expect(st.forget(spike)).toBe(250);
    expect(st.advance(at + 40 * MIN).filter((d) => d.kind !== 'trends.rising')).toEqual([]);
    // The same burst kept fires both (the control).
    const kept = new SubredditTrends('t');
    const k = steadyThenBurst(kept, 250);
    expect(kept.advance(k.at + 40 * MIN).map((d) => d.kind)).toEqual(expect.arrayContaining(['trends.surge', 'trends.velocity']));
  });

  it('takes them out of closed surge buckets within the window, once per source, and not twice', () => {
    const st = new SubredditTrends('t');
    const { spike, at } = steadyThenBurst(st, 250);
    st.advance(at + 40 * MIN);
    // Two posts of one author in one bucket are one source: the bucket drops by one when both are gone.
    expect(st.forget(spike.slice(0, 10))).toBe(10);
    expect(st.forget(spike.slice(0, 10))).toBe(0);
    const twin = { ...spike[10], id: 'twin' };
    expect(st.forget([twin])).toBe(0); // never counted
  });

  it('leaves buckets that have left the longest window alone', () => {
    const st = new SubredditTrends('t');
    const { spike, at } = steadyThenBurst(st, 250);
    st.advance(at + 5 * 3600_000);
    expect(st.forget(spike)).toBe(0);
  });
});

describe('SubredditTrends', () => {
  it('stays quiet on a steady subreddit and fires surge and velocity on a burst', () => {
    const quiet = feed(new SubredditTrends('t'), 400, 4);
    expect(quiet.filter((d) => d.kind !== 'trends.rising')).toEqual([]);

    // 4 → 250 posts in five minutes: enough to double the surge detector's two-hour window.
    const loud = feed(new SubredditTrends('t'), 400, 250);
    const kinds = new Set(loud.map((d) => d.kind));
    expect(kinds.has('trends.surge')).toBe(true);
    expect(kinds.has('trends.velocity')).toBe(true);
    const v = loud.find((d) => d.kind === 'trends.velocity');
    expect(v && 'keyword' in v && ['quantum', 'breakthrough', 'announc', 'announce'].some((k) => v.keyword.startsWith(k.slice(0, 6)))).toBe(true);
  });

  it('counts a post once however often it is observed', () => {
    const a = new SubredditTrends('t');
    const b = new SubredditTrends('t');
    const posts = [post(1, T0), post(2, T0 + MIN)];
    a.observe(posts, new Set(['p1', 'p2']), T0 + 2 * MIN);
    b.observe(posts, new Set(['p1', 'p2']), T0 + 2 * MIN);
    b.observe(posts, new Set(), T0 + 3 * MIN); // a re-read: not new
    expect(a.advance(T0 + 60 * MIN)).toEqual(b.advance(T0 + 60 * MIN));
  });

  it('hours without data are a gap, not silence: after markGap the data coming back is not a surge', () => {
    /** Two days of a steady subreddit, three days with no data, one more steady day. */
    const run = (gap: boolean) => {
      const st = new SubredditTrends('t');
      const [holeFrom, holeTo] = [2 * 288, 5 * 288];
      // As a replay finds it: from the last post before the hole to the first one after it.
      if (gap) st.markGap(T0 + (holeFrom - 1) * 5 * MIN + 3 * MIN, T0 + holeTo * 5 * MIN);
      const out = [];
      let n = 0;
      for (let b = 0; b < 6 * 288; b++) {
        if (b >= holeFrom && b < holeTo) continue;
        const posts = Array.from({ length: 4 }, (_, k) => post(n++, T0 + b * 5 * MIN + k * MIN, `steady talk ${n % 7} about usual things`));
        st.observe(posts, new Set(posts.map((p) => p.id)), T0 + (b + 1) * 5 * MIN);
        out.push(...st.advance().filter((d) => d.kind === 'trends.surge'));
      }
      return out;
    };
    // Fed as three days of zero posts, the ordinary day after them reads as a surge.
    expect(run(false).length).toBeGreaterThan(0);
    expect(run(true)).toEqual([]);
  });

  it('is deterministic: the same input gives the same detections and event ids', () => {
    const ids = (ds: ReturnType<typeof feed>) => ds.map((d) => toTrendEvent('t', d).id);
    expect(ids(feed(new SubredditTrends('t'), 300, 50))).toEqual(ids(feed(new SubredditTrends('t'), 300, 50)));
  });
});

describe('trend events', () => {
  it('derives evt_ ids from the event key', () => {
    expect(trendEventId('k')).toMatch(/^evt_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(trendEventId('k')).toBe(trendEventId('k'));
    expect(trendEventId('k')).not.toBe(trendEventId('k2'));
  });

  it('keeps the event ids already stored and delivered (pinned values)', () => {
    expect(trendEventId('k')).toBe('evt_g9ac6ad9518fdn9svmvpyj0pxr');
    expect(trendEventId('trends.surge|x|1')).toBe('evt_me4r8ggwrb04jvs36n5apezcwp');
  });

  it('carries the evidence in snake_case with absolute permalinks', () => {
    const ev = toTrendEvent('typescript', risingDetection('typescript', 3));
    expect(ev).toMatchObject({
      type: 'trends.rising',
      createdAt: new Date(T0 + 30 * MIN),
      data: { post_id: 'abc', permalink: 'https://www.reddit.com/r/typescript/comments/abc/x/', score_per_hour: 100, z_score: 4.2 },
    });
  });

  it('says why each kind fired: observed, expected, lift, threshold and the window', () => {
    const surge = toTrendEvent('t', {
      kind: 'trends.surge',
      trigger: 'score',
      bucketStart: T0,
      bucketEnd: T0 + 15 * MIN,
      count: 40,
      baseline: 8,
      stddev: 3.2,
      score: 10,
      threshold: 5,
      windowBuckets: 3,
      seasonal: true,
    });
    expect(surge.data).toEqual({
      window_start: new Date(T0).toISOString(),
      window_end: new Date(T0 + 15 * MIN).toISOString(),
      observed: 40,
      expected: 8,
      lift: 5,
      threshold: 5,
      count: 40,
      baseline: 8,
      stddev: 3.2,
      score: 10,
      window_buckets: 3,
      trigger: 'score',
      update: false,
      episode_start: new Date(T0).toISOString(),
      previous_lift: 0,
      previous_observed: 0,
      seasonal: true,
      distinct_authors: 0,
    });
    const velocity = toTrendEvent('t', {
      kind: 'trends.velocity',
      keyword: 'eclipse',
      keywords: ['eclipse', 'totality'],
      bucketStart: T0,
      bucketEnd: T0 + 30 * MIN,
      firstPostAt: T0 + 7 * MIN,
      count: 12,
      posts: 200,
      distinctAuthors: 9,
      share: 0.06,
      baselineShare: 0.002,
      score: 7.5,
      threshold: 4,
      minCount: 5,
      postIds: ['a', 'b'],
      permalinks: ['/r/t/comments/a/', '/r/t/comments/b/'],
    });
    expect(velocity.data).toMatchObject({ observed: 12, expected: 0.4, lift: 30, threshold: 4, score: 7.5, min_count: 5, keyword: 'eclipse', post_ids: ['a', 'b'] });
    expect(velocity.data).toMatchObject({ keywords: ['eclipse', 'totality'], distinct_authors: 9, first_post_at: new Date(T0 + 7 * MIN).toISOString() });
    expect(velocity.data).toMatchObject({ window_start: new Date(T0).toISOString(), window_end: new Date(T0 + 30 * MIN).toISOString() });
    const rising = toTrendEvent('t', risingDetection('t', 2.5));
    expect(rising.data).toMatchObject({
      window_start: new Date(T0 + 15 * MIN).toISOString(),
      window_end: new Date(T0 + 30 * MIN).toISOString(),
      observed: 120,
      expected: 5,
      lift: 24,
      threshold: 2.5,
      z_score: 4.2,
      score_gained: 25,
      comments_gained: 3,
    });
  });
});

describe('SubredditTrends.learn (backfilled history)', () => {
  // 402 steady buckets (4 posts / 5 min) with a burst of 250 readers at bucket `burstAt`, read at
  // `until`, one minute into bucket 402 (and into a velocity bucket). A short cooldown, so the
  // history's burst does not mute a live one.
  const params = { surge: { cooldownBuckets: 50 } };
  const until = T0 + 402 * 5 * MIN + MIN;
  function history(burstAt = 300): ObservedPost[] {
    const posts: ObservedPost[] = [];
    let n = 0;
    for (let b = 0; b < 402; b++) for (let k = 0; k < 4; k++) posts.push(post(n++, T0 + b * 5 * MIN + k * MIN, `steady talk ${n % 7} about usual things`));
    for (let k = 0; k < 250; k++) posts.push(post(n++, T0 + burstAt * 5 * MIN + (k % 5) * MIN, `quantum breakthrough announced ${k}`, `reader${k}`));
    posts.push(post(n, until - 1000, 'the newest post of the history'));
    return posts.sort((a, b) => a.createdAtMs - b.createdAtMs);
  }
  const bucketKinds = (ds: ReturnType<SubredditTrends['advance']>) => ds.filter((d) => d.kind !== 'trends.rising');
  /** A live burst of 250 readers in the still-open bucket and the next one, then the buckets close. */
  function liveBurst(st: SubredditTrends) {
    const spike = Array.from({ length: 250 }, (_, k) => post(100_000 + k, until + (k % 5) * MIN, `eclipse totality seen ${k}`, `watcher${k}`));
    const out = st.observe(spike, new Set(spike.map((p) => p.id)), until + 5 * MIN);
    out.push(...st.advance(until + 40 * MIN));
    return bucketKinds(out);
  }

  it('announces nothing about the history, its burst included, before or after its buckets close', () => {
    const st = new SubredditTrends('t', params);
    const h = history(401);
    st.learn(h, new Set(h.map((p) => p.id)), until);
    // The burst's bucket ended by `until` but was still within the lateness: it closes now, silently.
    expect(bucketKinds(st.advance(until + 40 * MIN))).toEqual([]);

    // The same history fed live fires on its burst: learn is what keeps it quiet.
    const live = new SubredditTrends('t', params);
    const fired = bucketKinds([...live.observe(h, new Set(h.map((p) => p.id)), until), ...live.advance(until + 40 * MIN)]);
    expect(fired.map((d) => d.kind)).toContain('trends.surge');
    expect(fired.every((d) => d.bucketEnd <= until)).toBe(true);
  });

  it('gives the detectors a baseline at once: a burst right after the backfill fires, in the still-open bucket too', () => {
    const st = new SubredditTrends('t', params);
    const h = history();
    st.learn(h, new Set(h.map((p) => p.id)), until);
    const fired = liveBurst(st);
    expect(fired.map((d) => d.kind)).toEqual(expect.arrayContaining(['trends.surge', 'trends.velocity']));
    expect(fired.every((d) => d.bucketEnd > until)).toBe(true);

    // Without the history the same burst meets a cold detector: surge stays in its warm-up.
    expect(liveBurst(new SubredditTrends('t', params)).map((d) => d.kind)).not.toContain('trends.surge');
  });
});
