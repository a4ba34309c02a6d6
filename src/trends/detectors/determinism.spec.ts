import fc from 'fast-check';
import { runBacktest } from './backtest';
import { createRisingState, observeRising, RisingObservation } from './rising';
import { createStoryState, observeStoryPosts } from './stories';
import { createSurgeState, observeSurgeBucket } from './surge';
import { createVelocityState, observeVelocityPosts, VelocityPost } from './velocity';
import { mulberry32 as rng } from '../../common/prng';

const T0 = Date.UTC(2024, 0, 1);


/** One synthetic day of a subreddit, as the three detectors would see it. */
function day(seed: number): { counts: number[]; buckets: VelocityPost[][]; observations: RisingObservation[] } {
  const r = rng(seed);
  const words = Array.from({ length: 300 }, (_, i) => `dw${i}z`);
  const counts: number[] = [];
  const buckets: VelocityPost[][] = [];
  const observations: RisingObservation[] = [];
  let id = 0;
  for (let b = 0; b < 48; b++) {
    const posts: VelocityPost[] = [];
    const n = 60 + Math.floor(r() * 40) + (b === 40 ? 300 : 0);
    for (let i = 0; i < n; i++) {
      const title = Array.from({ length: 8 }, () => words[Math.floor(r() ** 3 * words.length)]).join(' ') + (b === 44 && r() < 0.3 ? ' eclipse' : '');
      const pid = `d${seed}_${id++}`;
      posts.push({ id: pid, title, permalink: `/r/d/comments/${pid}/` });
      const created = T0 + b * 1_800_000 + Math.floor(r() * 1_800_000);
      const q = r() < 0.01 ? 2000 : 10;
      for (let k = 1; k <= 3; k++) observations.push({ postId: pid, createdUtcMs: created, observedAtMs: created + k * 900_000, score: Math.round(q * k * r()), numComments: Math.round(k * r() * 5), permalink: `/r/d/comments/${pid}/`, title });
    }
    buckets.push(posts);
    for (let k = 0; k < 6; k++) counts.push(Math.round(n / 6));
  }
  observations.sort((a, b) => a.observedAtMs - b.observedAtMs || (a.postId < b.postId ? -1 : 1));
  return { counts, buckets, observations };
}

function runAll(seed: number): unknown[] {
  const { counts, buckets, observations } = day(seed);
  const events: unknown[] = [];
  const surge = createSurgeState({ warmupBuckets: 24 });
  counts.forEach((c, i) => events.push(observeSurgeBucket(surge, T0 + i * 300_000, c)));
  const velocity = createVelocityState({ warmupBuckets: 6 });
  buckets.forEach((posts, i) => events.push(...observeVelocityPosts(velocity, T0 + i * 1_800_000, posts)));
  const stories = createStoryState({ warmupMs: 6 * 3_600_000, warmupSources: 100 });
  buckets.forEach((posts, i) => events.push(...observeStoryPosts(stories, T0 + i * 1_800_000, posts)));
  const rising = createRisingState({ warmupSamples: 50 });
  for (const o of observations) events.push(observeRising(rising, o));
  return events.filter((e) => e !== null);
}

describe('determinism', () => {
  it('the same input gives the same events, byte for byte', () => {
    const a = runAll(1);
    const b = runAll(1);
    expect(a.length).toBeGreaterThan(0);
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    expect(JSON.stringify(runAll(2))).not.toBe(JSON.stringify(a));
  });

  it('backtests are pure functions of their input', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 200 }), { minLength: 1, maxLength: 400 }), (values) => {
        const series = values.map((value, i) => ({ timestamp: T0 + i * 300_000, value }));
        expect(runBacktest('surge', series)).toEqual(runBacktest('surge', series));
        expect(runBacktest('velocity', series)).toEqual(runBacktest('velocity', series));
      }),
      { numRuns: 50 },
    );
  });
});
