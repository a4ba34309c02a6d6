import { DEFAULT_SURGE_PARAMS } from './params';
import { createSurgeState, fillSurgeGaps, hourOfWeek, observeSurgeBucket, SurgeDetection, SurgeState } from './surge';
import { mulberry32 as rng } from '../../common/prng';

const B = DEFAULT_SURGE_PARAMS.bucketMs;
/** Monday 2024-01-01 00:00 UTC. */
const T0 = Date.UTC(2024, 0, 1);


/** Poisson draw (Knuth; means here stay small enough). */
function poisson(r: () => number, mean: number): number {
  if (mean > 30) return Math.max(0, Math.round(mean + Math.sqrt(mean) * gauss(r)));
  const l = Math.exp(-mean);
  let k = 0;
  let p = r();
  while (p > l) {
    k++;
    p *= r();
  }
  return k;
}

function gauss(r: () => number): number {
  return Math.sqrt(-2 * Math.log(r() || 1e-12)) * Math.cos(2 * Math.PI * r());
}

function feed(state: SurgeState, counts: number[], from = 0): { index: number; d: SurgeDetection }[] {
  const out: { index: number; d: SurgeDetection }[] = [];
  counts.forEach((c, i) => {
    const d = observeSurgeBucket(state, T0 + (from + i) * B, c);
    if (d) out.push({ index: from + i, d });
  });
  return out;
}

function poissonSeries(seed: number, n: number, mean: (i: number) => number): number[] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => poisson(r, mean(i)));
}

describe('trends.surge detector', () => {
  it('stays silent on a quiet Poisson series with a daily cycle', () => {
    for (const seed of [1, 2, 3]) {
      const day = 288;
      const counts = poissonSeries(seed, 5 * day, (i) => 20 * (1 + 0.5 * Math.sin((2 * Math.PI * i) / day)));
      expect(feed(createSurgeState(), counts)).toEqual([]);
    }
  });

  it('fires on an injected burst, with evidence', () => {
    const counts = poissonSeries(7, 600, () => 20);
    counts[400] = 90;
    const hits = feed(createSurgeState(), counts);
    expect(hits).toHaveLength(1);
    const { index, d } = hits[0];
    expect(index).toBe(400);
    expect(d).toMatchObject({ kind: 'trends.surge', bucketStart: T0 + 400 * B, bucketEnd: T0 + 401 * B, count: 90, windowBuckets: 1 });
    expect(d.threshold).toBe(DEFAULT_SURGE_PARAMS.threshold);
    expect(d.score).toBeGreaterThanOrEqual(d.threshold);
    expect(d.baseline).toBeGreaterThan(15);
    expect(d.baseline).toBeLessThan(25);
    expect(d.stddev).toBeGreaterThanOrEqual(Math.sqrt(d.baseline) - 1e-9);
    expect(d.score).toBeCloseTo((d.count - d.baseline) / d.stddev, 2);
  });

  it('fires on a sustained moderate surge through the window score', () => {
    // 1.8× for 6 buckets on a busy series: no single bucket is conclusive, three together are.
    const counts = poissonSeries(11, 700, (i) => (i >= 500 && i < 506 ? 90 : 50));
    const hits = feed(createSurgeState(), counts);
    expect(hits.length).toBe(1);
    expect(hits[0].index).toBeGreaterThanOrEqual(500);
    expect(hits[0].index).toBeLessThan(506);
  });

  it('does not re-fire during the cooldown, and fires again after it', () => {
    const cd = DEFAULT_SURGE_PARAMS.cooldownBuckets;
    const counts = poissonSeries(5, 800, () => 20);
    counts[400] = 100;
    counts[400 + cd] = 100; // inside the cooldown
    counts[400 + cd + 20] = 100; // after it
    const hits = feed(createSurgeState(), counts).map((h) => h.index);
    expect(hits).toEqual([400, 400 + cd + 20]);
  });

  it('respects the warm-up: no detection before warmupBuckets buckets', () => {
    const counts = poissonSeries(3, 200, () => 20);
    counts[10] = 200;
    counts[DEFAULT_SURGE_PARAMS.warmupBuckets - DEFAULT_SURGE_PARAMS.windowBuckets - 1] = 200;
    expect(feed(createSurgeState(), counts).map((h) => h.index)).toEqual([]);
    const later = poissonSeries(3, 200, () => 20);
    later[150] = 200;
    expect(feed(createSurgeState(), later).map((h) => h.index)).toEqual([150]);
  });

  it('variance floor: a dead subreddit going 0,0,0,1 (or a handful) does not fire', () => {
    const state = createSurgeState();
    const zeros = new Array(2000).fill(0);
    expect(feed(state, zeros)).toEqual([]);
    expect(observeSurgeBucket(state, T0 + 2000 * B, 1)).toBeNull();
    expect(observeSurgeBucket(state, T0 + 2001 * B, 0)).toBeNull();
    expect(observeSurgeBucket(state, T0 + 2002 * B, 3)).toBeNull();
    expect(state.lastScore).toBeLessThan(DEFAULT_SURGE_PARAMS.threshold);
  });

  it('a quiet subreddit (~0.2 posts/bucket) stays silent for a simulated week', () => {
    const counts = poissonSeries(21, 2016, () => 0.2);
    expect(feed(createSurgeState(), counts)).toEqual([]);
  });

  it('learns an hour-of-week pattern after two full weeks and stops flagging it', () => {
    const r = rng(9);
    const state = createSurgeState();
    const weeksFired = new Set<number>();
    for (let i = 0; i < 2016 * 5; i++) {
      const t = T0 + i * B;
      const mean = hourOfWeek(t) === 9 ? 80 : 20; // Mondays 09:00–10:00 UTC are always 4× busier
      const d = observeSurgeBucket(state, t, poisson(r, mean));
      if (d) weeksFired.add(Math.floor(i / 2016));
    }
    expect(weeksFired.has(0)).toBe(true);
    expect(weeksFired.has(3)).toBe(false);
    expect(weeksFired.has(4)).toBe(false);
    expect(state.seasonalFactor[9]).toBeGreaterThan(3);
  });

  it('a one-off surge does not become seasonal (median across weeks)', () => {
    const r = rng(10);
    const state = createSurgeState();
    for (let i = 0; i < 2016 * 4; i++) {
      const t = T0 + i * B;
      const mean = hourOfWeek(t) === 9 && i < 2016 ? 200 : 20;
      observeSurgeBucket(state, t, poisson(r, mean));
    }
    expect(state.seasonalFactor[9]).toBeGreaterThan(0.7);
    expect(state.seasonalFactor[9]).toBeLessThan(1.4);
  });

  it('folds missing buckets in as zeros, ignores replays, and resets after a long gap', () => {
    const state = createSurgeState();
    feed(state, poissonSeries(4, 100, () => 20));
    const before = state.observed;
    observeSurgeBucket(state, T0 + 110 * B, 20); // 10 missing buckets
    expect(state.observed).toBe(before + 11);
    const snapshot = JSON.stringify({ ...state, params: null });
    expect(observeSurgeBucket(state, T0 + 110 * B, 500)).toBeNull(); // replay of the same bucket
    expect(observeSurgeBucket(state, T0 + 50 * B, 500)).toBeNull(); // out of order
    expect(JSON.stringify({ ...state, params: null })).toBe(snapshot);
    observeSurgeBucket(state, T0 + (111 + DEFAULT_SURGE_PARAMS.maxGapBuckets + 5) * B, 20);
    expect(state.observed).toBe(1); // warm-up again
  });

  it('traces expected and the firing bound per bucket: a count at lastUpper fires, one below does not', () => {
    const history = poissonSeries(31, 2016 * 2, (i) => 20 * (1 + 0.5 * Math.sin((2 * Math.PI * i) / 288)));
    const warm = createSurgeState();
    feed(warm, history.slice(0, 5));
    expect(warm.lastExpected).toBeNaN();
    expect(warm.lastUpper).toBeNaN();
    let checked = 0;
    for (const at of [700, 1500, 3000, 4000]) {
      const probe = () => {
        const s = createSurgeState();
        feed(s, history.slice(0, at));
        return s;
      };
      const a = probe();
      observeSurgeBucket(a, T0 + at * B, history[at]);
      const upper = a.lastUpper;
      expect(a.lastExpected).toBeGreaterThan(0);
      expect(upper).toBeGreaterThan(a.lastExpected);
      const b = probe();
      const c = probe();
      // The bound does not depend on the bucket's own count, so it holds for the same bucket in a twin state.
      expect(observeSurgeBucket(b, T0 + at * B, Math.ceil(upper))).not.toBeNull();
      expect(b.lastUpper).toBeCloseTo(upper, 9);
      expect(observeSurgeBucket(c, T0 + at * B, Math.ceil(upper) - 1)).toBeNull();
      checked++;
    }
    expect(checked).toBe(4);
  });

  it('floors bucket starts to the grid', () => {
    const state = createSurgeState();
    observeSurgeBucket(state, T0 + 1234, 3);
    expect(state.lastBucketStart).toBe(T0);
  });

  it('keeps O(1) memory per subreddit', () => {
    const state = createSurgeState();
    const sizes = () => [state.seasonalRatios.length, state.ringCount.length, state.seasonalHours.length];
    const initial = sizes();
    feed(state, poissonSeries(8, 100_000, () => 5));
    expect(sizes()).toEqual(initial);
  });

  it('validates input and parameters', () => {
    const state = createSurgeState();
    expect(() => observeSurgeBucket(state, T0, -1)).toThrow(RangeError);
    expect(() => observeSurgeBucket(state, NaN, 1)).toThrow(RangeError);
    expect(() => createSurgeState({ threshold: 0 })).toThrow(/threshold/);
    expect(() => createSurgeState({ bucketMs: 7 * 60_000 })).toThrow(/bucketMs/);
  });

  it('hourOfWeek: slot 0 is Monday 00:00 UTC, 167 is Sunday 23:00', () => {
    expect(hourOfWeek(T0)).toBe(0);
    expect(hourOfWeek(T0 + 9 * 3_600_000 + 59 * 60_000)).toBe(9);
    expect(hourOfWeek(T0 - 1)).toBe(167);
    expect(hourOfWeek(T0 + 7 * 86_400_000)).toBe(0);
  });

  it('fillSurgeGaps: sorted, contiguous, duplicates summed', () => {
    expect(
      fillSurgeGaps(
        [
          { bucketStart: T0 + 3 * B, count: 2 },
          { bucketStart: T0, count: 1 },
          { bucketStart: T0 + 3 * B + 5, count: 4 },
        ],
        B,
      ),
    ).toEqual([
      { bucketStart: T0, count: 1 },
      { bucketStart: T0 + B, count: 0 },
      { bucketStart: T0 + 2 * B, count: 0 },
      { bucketStart: T0 + 3 * B, count: 6 },
    ]);
    expect(fillSurgeGaps([])).toEqual([]);
  });
});
