import type { VelocityDetection } from '../../events/kinds/velocity';
import { DEFAULT_VELOCITY_PARAMS } from './params';
import { postKeywords } from './tokenizer';
import { mulberry32 as rng } from '../../common/prng';
import { gamma, poisson } from '../../../test/support/random';
import {
  createVelocityState,
  observeVelocityCounts,
  observeVelocityPosts,
  VelocityPost,
  VelocityState,
} from './velocity';

const B = DEFAULT_VELOCITY_PARAMS.bucketMs;
const T0 = Date.UTC(2024, 0, 1);


/** 800 pseudo-words with Zipf frequencies; titles of 8 words plus English filler. */
const VOCAB = Array.from({ length: 800 }, (_, i) => `vw${i.toString(36)}x`);
const CDF = (() => {
  const w = VOCAB.map((_, r) => 1 / (r + 1));
  const total = w.reduce((a, b) => a + b, 0);
  let acc = 0;
  return w.map((x) => (acc += x / total));
})();

function zipfWord(r: () => number): string {
  const u = r();
  let lo = 0;
  let hi = CDF.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (CDF[mid] < u) lo = mid + 1;
    else hi = mid;
  }
  return VOCAB[lo];
}

interface StreamOptions {
  buckets: number;
  posts: number;
  /** bucket → [keyword, share of posts that get it] */
  inject?: Map<number, [string, number]>;
  /** bucket → volume multiplier (same word mix) */
  volume?: Map<number, number>;
}

let nextId = 0;
function stream(seed: number, o: StreamOptions): VelocityPost[][] {
  const r = rng(seed);
  const out: VelocityPost[][] = [];
  for (let b = 0; b < o.buckets; b++) {
    const n = Math.round(o.posts * (o.volume?.get(b) ?? 1));
    const inject = o.inject?.get(b);
    const posts: VelocityPost[] = [];
    for (let i = 0; i < n; i++) {
      const words = ['the', 'and'];
      for (let k = 0; k < 8; k++) words.push(zipfWord(r));
      if (inject && r() < inject[1]) words.push(inject[0]);
      const id = `t${(nextId++).toString(36)}`;
      posts.push({ id, title: words.join(' '), permalink: `/r/test/comments/${id}/` });
    }
    out.push(posts);
  }
  return out;
}

function run(state: VelocityState, buckets: VelocityPost[][]): { bucket: number; d: VelocityDetection }[] {
  const out: { bucket: number; d: VelocityDetection }[] = [];
  buckets.forEach((posts, b) => {
    for (const d of observeVelocityPosts(state, T0 + b * B, posts)) out.push({ bucket: b, d });
  });
  return out;
}

describe('trends.velocity detector', () => {
  it('stays silent on a steady post stream', () => {
    expect(run(createVelocityState(), stream(1, { buckets: 200, posts: 150 }))).toEqual([]);
  });

  it('fires on a keyword burst, with evidence', () => {
    const hits = run(createVelocityState(), stream(2, { buckets: 160, posts: 150, inject: new Map([[150, ['earthquake', 0.2]]]) }));
    expect(hits).toHaveLength(1);
    const { bucket, d } = hits[0];
    expect(bucket).toBe(150);
    expect(d).toMatchObject({ kind: 'trends.velocity', keyword: 'earthquake', bucketStart: T0 + 150 * B, bucketEnd: T0 + 151 * B, posts: 150 });
    expect(d.count).toBeGreaterThanOrEqual(DEFAULT_VELOCITY_PARAMS.minCount);
    expect(d.share).toBeCloseTo(d.count / 150, 5);
    expect(d.baselineShare).toBe(DEFAULT_VELOCITY_PARAMS.priorShare); // never seen before: the prior
    expect(d.score).toBeGreaterThanOrEqual(d.threshold);
    expect(d.postIds.length).toBe(10);
    expect(d.permalinks.length).toBe(10);
    expect(d.permalinks[0]).toBe(`/r/test/comments/${d.postIds[0]}/`);
  });

  it('flags an existing word whose share jumps, against its own baseline', () => {
    // vw5x is a common word (~4% of posts); inject it into a further 40% of posts.
    const hits = run(createVelocityState(), stream(3, { buckets: 160, posts: 150, inject: new Map([[150, ['vw5x', 0.4]]]) }));
    expect(hits.map((h) => [h.bucket, h.d.keyword])).toEqual([[150, 'vw5x']]);
    expect(hits[0].d.baselineShare).toBeGreaterThan(0.02);
  });

  it('a subreddit-wide surge (same mix, 5× the posts) flags no common word', () => {
    const volume = new Map<number, number>();
    for (let b = 150; b < 156; b++) volume.set(b, 5);
    expect(run(createVelocityState(), stream(4, { buckets: 170, posts: 120, volume }))).toEqual([]);
  });

  it('a first appearance in a single post (or a few) does not fire', () => {
    const state = createVelocityState();
    const buckets = stream(5, { buckets: 160, posts: 150 });
    buckets[150][0] = { id: 'solo', title: 'zyzzyva sighting' };
    for (let i = 0; i < DEFAULT_VELOCITY_PARAMS.minCount - 1; i++) buckets[155][i] = { id: `few${i}`, title: 'quokka again' };
    expect(run(state, buckets)).toEqual([]);
  });

  it('does not re-fire a keyword during its cooldown, and can after', () => {
    const cd = DEFAULT_VELOCITY_PARAMS.cooldownBuckets;
    const inject = new Map<number, [string, number]>([
      [100, ['eclipse', 0.3]],
      [102, ['eclipse', 0.3]],
      [100 + cd + 1, ['eclipse', 0.6]],
    ]);
    const hits = run(createVelocityState(), stream(6, { buckets: 130, posts: 150, inject }));
    expect(hits.map((h) => h.bucket)).toEqual([100, 100 + cd + 1]);
  });

  it('respects the warm-up', () => {
    const hits = run(createVelocityState(), stream(7, { buckets: 40, posts: 150, inject: new Map([[3, ['earthquake', 0.3]]]) }));
    expect(hits).toEqual([]);
  });

  it('counts a keyword once per post, and a duplicated post once', () => {
    const state = createVelocityState();
    run(state, stream(8, { buckets: 50, posts: 150 }));
    const posts = stream(9, { buckets: 1, posts: 150 })[0];
    for (let i = 0; i < 4; i++) posts[i] = { id: `rep${i}`, title: 'volcano '.repeat(20), selftext: 'volcano volcanoes' };
    posts.push({ ...posts[0] }, { ...posts[1] }); // same ids again
    expect(observeVelocityPosts(state, T0 + 50 * B, posts)).toEqual([]); // 4 posts < minCount
  });

  it('ignores replays and empty buckets', () => {
    const state = createVelocityState();
    const buckets = stream(10, { buckets: 30, posts: 100, inject: new Map([[29, ['earthquake', 0.3]]]) });
    run(state, buckets.slice(0, 29));
    const observed = state.observedBuckets;
    expect(observeVelocityPosts(state, T0 + 20 * B, buckets[29])).toEqual([]); // out of order
    expect(state.observedBuckets).toBe(observed);
    expect(observeVelocityPosts(state, T0 + 29 * B, [])).toEqual([]);
    expect(state.observedBuckets).toBe(observed);
  });

  it('keeps at most maxKeywords keywords when fed 100,000 distinct ones', () => {
    for (const maxKeywords of [DEFAULT_VELOCITY_PARAMS.maxKeywords, 300]) {
      const state = createVelocityState({ maxKeywords });
      const r = rng(11);
      let fresh = 0;
      for (let b = 0; fresh < 100_000; b++) {
        const posts: VelocityPost[] = [];
        for (let i = 0; i < 100; i++) {
          const words = [zipfWord(r), zipfWord(r)];
          for (let k = 0; k < 10; k++) words.push(`nw${(fresh++).toString(36)}q`);
          posts.push({ id: `m${b}_${i}`, title: words.join(' ') });
        }
        observeVelocityPosts(state, T0 + b * B, posts);
        expect(state.keywords.size).toBeLessThanOrEqual(maxKeywords);
      }
      // The words that recur (the Zipf head) survive eviction; one-off words do not crowd them out.
      expect(state.keywords.has('vw0x')).toBe(true);
    }
  });

  it('observeVelocityCounts scores exactly like observeVelocityPosts', () => {
    const buckets = stream(12, { buckets: 120, posts: 150, inject: new Map([[110, ['earthquake', 0.2]]]) });
    const a = createVelocityState();
    const b = createVelocityState();
    const fromPosts: unknown[] = [];
    const fromCounts: unknown[] = [];
    buckets.forEach((posts, i) => {
      for (const d of observeVelocityPosts(a, T0 + i * B, posts)) fromPosts.push({ ...d, postIds: [], permalinks: [] });
      const counts = new Map<string, number>();
      for (const p of posts) for (const k of postKeywords(p.title, p.selftext)) counts.set(k, (counts.get(k) ?? 0) + 1);
      fromCounts.push(...observeVelocityCounts(b, T0 + i * B, posts.length, counts));
    });
    expect(fromPosts.length).toBe(1);
    expect(fromCounts).toEqual(fromPosts);
  });

  it('validates counts and parameters', () => {
    const state = createVelocityState();
    expect(() => observeVelocityCounts(state, T0, 5, new Map([['x', 6]]))).toThrow(RangeError);
    expect(() => createVelocityState({ priorShare: 1.5 })).toThrow(/priorShare/);
  });
});

describe('velocity: false-alarm discipline', () => {
  const feed = (st: VelocityState, counts: number[], total = 1000) =>
    counts.flatMap((c, i) => observeVelocityCounts(st, T0 + i * B, total, new Map([['kw', c]])));

  it('one event per episode: a burst that outlasts the cooldown fires once', () => {
    const r = rng(8);
    // 100 quiet buckets at ~10, then 40 buckets (20 h, past the 6 h cooldown) at ~60, then quiet again, then a second burst.
    const counts = [
      ...Array.from({ length: 100 }, () => poisson(r, 10)),
      ...Array.from({ length: 40 }, () => poisson(r, 60)),
      ...Array.from({ length: 60 }, () => poisson(r, 10)),
      ...Array.from({ length: 5 }, () => poisson(r, 80)),
    ];
    const fired = feed(createVelocityState(), counts);
    const at = fired.map((d) => (d.bucketStart - T0) / B);
    expect(at).toHaveLength(2);
    expect(at[0]).toBeGreaterThanOrEqual(100);
    expect(at[0]).toBeLessThan(103);
    expect(at[1]).toBeGreaterThanOrEqual(200);
  });

  it('robust baseline: a long burst barely raises the share it is measured against', () => {
    const r = rng(9);
    const st = createVelocityState();
    feed(st, Array.from({ length: 100 }, () => poisson(r, 10)));
    const before = st.keywords.share(st.keywords.slot('kw', spanHashOf('kw')));
    feed(
      st,
      Array.from({ length: 20 }, () => poisson(r, 100)),
    );
    // Unclipped, 20 buckets at 10× would lift the EWMA share by ≈ 25% × 9 ≈ 2.3×; clipped, far less.
    const after = st.keywords.share(st.keywords.slot('kw', spanHashOf('kw')));
    expect(after / before).toBeLessThan(1.6);
  });

  it('learns the negative-binomial excess of overdispersed counts, and about none on Poisson counts', () => {
    const r = rng(10);
    const poissonState = createVelocityState();
    feed(poissonState, Array.from({ length: 400 }, () => poisson(r, 20)));
    expect(Math.abs(poissonState.learntExcess)).toBeLessThan(0.03);
    // Negative binomial with shape 4 at mean 20: variance 20 + 20²/4, i.e. φ = 0.25.
    const nbState = createVelocityState();
    const nb = Array.from({ length: 400 }, () => poisson(r, (20 * gamma(r, 4)) / 4));
    const fired = feed(nbState, nb);
    expect(nbState.learntExcess).toBeGreaterThan(0.12);
    expect(nbState.learntExcess).toBeLessThan(0.4);
    // With the learnt excess, NB noise alone raises fewer alarms than with the fixed 1.5 only.
    const fixed = createVelocityState();
    fixed.dispersionBuckets = -1e9; // never trusts a learnt figure
    expect(fired.length).toBeLessThan(feed(fixed, nb).length);
  });
});

function spanHashOf(k: string): number {
  // The table is keyed by the scanner's FNV-1a hash of the keyword.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('./tokenizer') as typeof import('./tokenizer')).spanHash(k);
}

describe('trends.velocity stories and spam', () => {
  /** A steady stream with authors, then `extra` posts in one bucket. */
  function withAuthors(seed: number, buckets: number, extra: Map<number, VelocityPost[]>): VelocityPost[][] {
    return stream(seed, { buckets, posts: 150 }).map((posts, b) => [
      ...posts.map((p, i) => ({ ...p, author: `user${(seed * 7919 + b * 131 + i) % 5000}` })),
      ...(extra.get(b) ?? []),
    ]);
  }
  const story = (n: number, title: (k: number) => string, author: (k: number) => string | undefined) =>
    Array.from({ length: n }, (_, k) => ({ id: `s${(nextId++).toString(36)}`, title: title(k), author: author(k) }));

  it('reports keywords that spike in the same posts as one event carrying all of them', () => {
    const headlines = ['Josh Brown shouts out the sub on air', 'josh brown on TV today', 'Did you see Josh Brown?', 'JOSH BROWN praising us'];
    const extra = new Map([[150, story(12, (k) => headlines[k % 4] + ` ${k}00`, (k) => `viewer${k}`)]]);
    const fired = run(createVelocityState(), withAuthors(3, 160, extra));
    expect(fired).toHaveLength(1);
    expect(fired[0].bucket).toBe(150);
    expect(fired[0].d.keywords).toEqual(expect.arrayContaining(['josh', 'brown']));
    expect([fired[0].d.keyword]).toEqual(fired[0].d.keywords.slice(0, 1));
    expect(fired[0].d.distinctAuthors).toBe(12);
  });

  it('ignores one or two authors reposting a title, however often', () => {
    const extra = new Map([[150, story(12, () => "Don't mess with the CCP", (k) => (k % 2 === 0 ? 'spammer1' : 'spammer2'))]]);
    expect(run(createVelocityState(), withAuthors(3, 160, extra))).toEqual([]);
    // The same posts from twelve people are a story.
    const many = new Map([[150, story(12, () => "Don't mess with the CCP", (k) => `person${k}`)]]);
    expect(run(createVelocityState(), withAuthors(3, 160, many)).map((f) => f.d.keyword)).toEqual(['ccp']);
  });

  it('counts distinct titles when no author is known, so reposts count once and a real story still fires', () => {
    const reposts = new Map([[150, story(12, () => 'SOS to the moon', () => '[deleted]')]]);
    expect(run(createVelocityState(), withAuthors(5, 160, reposts))).toEqual([]);
    const pump = new Map([[150, story(12, (k) => `$SOS earnings: up ${k}0% premarket ${['wow', 'nice', 'calls', 'moon'][k % 4]} ${k}00`, () => '[deleted]')]]);
    const fired = run(createVelocityState(), withAuthors(5, 160, pump));
    expect(fired).toHaveLength(1);
    expect(fired[0].d.keywords).toEqual(expect.arrayContaining(['sos', 'earning']));
    expect(fired[0].d.distinctAuthors).toBe(0);
  });

  it('catches a story that builds over two buckets, below the threshold in each', () => {
    const half = (b: number) => [b, story(8, (k) => `Musk is now the richest person ${b}${k}00`, (k) => `fan${b}x${k}`)] as const;
    const state = createVelocityState();
    const single = run(createVelocityState(), withAuthors(9, 160, new Map([half(150)])));
    expect(single).toEqual([]);
    const fired = run(state, withAuthors(9, 160, new Map([half(150), half(151)])));
    expect(fired).toHaveLength(1);
    expect(fired[0].bucket).toBe(151);
    expect(fired[0].d.bucketStart).toBe(T0 + 150 * B);
    expect(fired[0].d.count).toBe(16);
    expect(fired[0].d.keywords).toEqual(expect.arrayContaining(['musk', 'richest']));
    expect(fired[0].d.distinctAuthors).toBe(16);
  });
});
