import { DEFAULT_SURGE_PARAMS } from './params';
import type { SurgeDetection } from '../../events/kinds/surge';
import { createSurgeState, fillSurgeGaps, forgetSurgeSource, hourOfDay, hourOfWeek, observeSurgeBucket, observeSurgeGap, SurgeState } from './surge';
import { mulberry32 as rng } from '../../common/prng';
import { poisson as knuthPoisson } from '../../../test/support/random';

const B = DEFAULT_SURGE_PARAMS.bucketMs;
/** Monday 2024-01-01 00:00 UTC. */
const T0 = Date.UTC(2024, 0, 1);


/** Poisson draw: Knuth's for small means, its normal approximation above 30. */
function poisson(r: () => number, mean: number): number {
  if (mean > 30) return Math.max(0, Math.round(mean + Math.sqrt(mean) * gauss(r)));
  return knuthPoisson(r, mean);
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

describe('forgetSurgeSource', () => {
  it("lowers a folded bucket's count in the windows' ring, only while the bucket is in it", () => {
    const s = createSurgeState();
    const b = s.params.bucketMs;
    const t0 = Date.UTC(2026, 0, 5);
    for (let i = 0; i < 10; i++) observeSurgeBucket(s, t0 + i * b, i === 7 ? 30 : 4);
    const slot = (back: number) => s.ringCount[(s.ringPos - 1 - back + s.ringCount.length) % s.ringCount.length];
    expect(slot(2)).toBe(30);
    expect(forgetSurgeSource(s, t0 + 7 * b + 1000)).toBe(true); // any time inside the bucket
    expect(slot(2)).toBe(29);
    expect(forgetSurgeSource(s, t0 + 10 * b)).toBe(false); // not folded in yet
    expect(forgetSurgeSource(s, t0 - b)).toBe(false); // before the first
    for (let i = 10; i < 10 + s.ringCount.length; i++) observeSurgeBucket(s, t0 + i * b, 4);
    expect(forgetSurgeSource(s, t0 + 7 * b)).toBe(false); // left the ring
  });
});

describe('trends.surge detector', () => {
  it('stays silent on a quiet Poisson series with a daily cycle', () => {
    for (const seed of [1, 2, 3]) {
      const day = 288;
      const counts = poissonSeries(seed, 5 * day, (i) => 20 * (1 + 0.5 * Math.sin((2 * Math.PI * i) / day)));
      expect(feed(createSurgeState(), counts)).toEqual([]);
    }
  });

  it('fires once on a sustained surge, with evidence', () => {
    // 3× for an hour on a busy subreddit.
    const counts = poissonSeries(7, 600, (i) => (i >= 400 && i < 412 ? 60 : 20));
    const hits = feed(createSurgeState(), counts);
    expect(hits).toHaveLength(1);
    const { index, d } = hits[0];
    const w = d.windowBuckets;
    expect([DEFAULT_SURGE_PARAMS.shortWindowBuckets, DEFAULT_SURGE_PARAMS.windowBuckets]).toContain(w);
    expect(index).toBeGreaterThanOrEqual(400);
    expect(index).toBeLessThan(412);
    expect(d).toMatchObject({ kind: 'trends.surge', bucketStart: T0 + (index - w + 1) * B, bucketEnd: T0 + (index + 1) * B });
    expect(d.count).toBe(counts.slice(index - w + 1, index + 1).reduce((a, b) => a + b, 0));
    // The bar is the series' own, never below the floor.
    expect(d.threshold).toBeGreaterThanOrEqual(DEFAULT_SURGE_PARAMS.threshold);
    expect(d.score).toBeGreaterThanOrEqual(d.threshold);
    expect(d.baseline).toBeGreaterThan(w * 15);
    expect(d.baseline).toBeLessThan(w * 25);
    const k = DEFAULT_SURGE_PARAMS.windowPseudoCount;
    expect((d.count + k) / (d.baseline + k)).toBeGreaterThanOrEqual(DEFAULT_SURGE_PARAMS.minLift);
    // The payload's documented relation holds: score = (count − baseline) / stddev.
    expect(d.stddev).toBeGreaterThan(0);
    expect(d.score).toBeCloseTo((d.count - d.baseline) / d.stddev, 2);
  });

  it('a short, intense burst is a surge: 15 minutes at 20× fires within the burst', () => {
    const counts = poissonSeries(8, 3000, (i) => (i >= 2500 && i < 2503 ? 400 : 20));
    const hits = feed(createSurgeState(), counts);
    expect(hits.map((h) => h.index)).toEqual([expect.any(Number)]);
    expect(hits[0].index).toBeGreaterThanOrEqual(2500);
    expect(hits[0].index).toBeLessThan(2503);
    expect(hits[0].d.windowBuckets).toBe(DEFAULT_SURGE_PARAMS.shortWindowBuckets);
  });

  it('a slow lift is a surge: three hours at 2.5× fires', () => {
    const counts = poissonSeries(9, 3000, (i) => (i >= 2500 && i < 2536 ? 50 : 20));
    const hits = feed(createSurgeState(), counts).map((h) => h.index);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toBeGreaterThanOrEqual(2500);
    expect(hits[0]).toBeLessThan(2536);
  });

  it('a quiet subreddit whose normal is a one-bucket spike every day learns it: its bar rises above them', () => {
    // ~2 posts per bucket and, twice a day, one bucket of 100–200 (a bot, a cross-post): the unseen
    // quiet series that the previous model alarmed on every few days.
    const r = rng(31);
    const weeks = 6;
    const counts = Array.from({ length: 2016 * weeks }, () => poisson(r, 2) + (r() < 2 / 288 ? 100 + Math.floor(r() * 100) : 0));
    const state = createSurgeState();
    const hits = feed(state, counts);
    expect(hits.length).toBeLessThanOrEqual(weeks);
    // Both scales' bars sit well above the fixed floor.
    for (const bar of state.bars) expect(bar).toBeGreaterThan(DEFAULT_SURGE_PARAMS.threshold + 1);
    // With the fixed bar alone, the same series alarms more.
    expect(feed(createSurgeState({ barRank: 0 }), counts).length).toBeGreaterThan(hits.length);
  });

  it('needs the minimum lift as well as the score: a steady busy subreddit going 1.5× does not fire', () => {
    const counts = poissonSeries(11, 1200, (i) => (i >= 500 && i < 800 ? 300 : 200));
    expect(feed(createSurgeState(), counts)).toEqual([]);
    const state = createSurgeState({ minLift: 1.2 });
    expect(feed(state, counts).length).toBe(1);
  });

  it('fires once per episode: a surge longer than the cooldown fires once', () => {
    const counts = poissonSeries(12, 1400, (i) => (i >= 400 && i < 1000 ? 60 : 20));
    const hits = feed(createSurgeState(), counts).map((h) => h.index);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toBeGreaterThanOrEqual(400);
    expect(hits[0]).toBeLessThan(412);
  });

  it('does not re-fire during the cooldown, and fires again after it', () => {
    const cd = DEFAULT_SURGE_PARAMS.cooldownBuckets;
    const surgeAt = [400, 400 + cd - 40, 400 + cd + 200];
    const counts = poissonSeries(5, 1400, (i) => (surgeAt.some((s) => i >= s && i < s + 12) ? 60 : 20));
    const hits = feed(createSurgeState(), counts).map((h) => h.index);
    expect(hits).toHaveLength(2);
    expect(hits[0]).toBeGreaterThanOrEqual(surgeAt[0]);
    expect(hits[0]).toBeLessThan(surgeAt[0] + 12);
    expect(hits[1]).toBeGreaterThanOrEqual(surgeAt[2]);
    expect(hits[1]).toBeLessThan(surgeAt[2] + 12);
  });

  it('respects the warm-up: no detection before warmupBuckets buckets', () => {
    const counts = poissonSeries(3, 300, (i) => (i >= 10 && i < 40 ? 100 : 20));
    expect(feed(createSurgeState(), counts).filter((h) => h.index < DEFAULT_SURGE_PARAMS.warmupBuckets)).toEqual([]);
    const later = poissonSeries(3, 300, (i) => (i >= 150 && i < 170 ? 100 : 20));
    const hits = feed(createSurgeState(), later).map((h) => h.index);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toBeGreaterThanOrEqual(150);
    expect(hits[0]).toBeLessThan(170);
  });

  it('a dead subreddit going 0,0,0,1 (or a handful) does not fire: minCount and the window pseudo-count', () => {
    const state = createSurgeState();
    const zeros = new Array(2000).fill(0);
    expect(feed(state, zeros)).toEqual([]);
    expect(observeSurgeBucket(state, T0 + 2000 * B, 1)).toBeNull();
    expect(observeSurgeBucket(state, T0 + 2001 * B, 0)).toBeNull();
    expect(observeSurgeBucket(state, T0 + 2002 * B, 3)).toBeNull();
  });

  it('a quiet subreddit (~0.2 posts/bucket) stays silent for a simulated week', () => {
    const counts = poissonSeries(21, 2016, () => 0.2);
    expect(feed(createSurgeState(), counts)).toEqual([]);
  });

  it('stays quiet on bursty, heavy-tailed counts: at most one alert per series-week', () => {
    // Real counts: a daily cycle, hour-long mood swings (lognormal, σ 0.4) and one-bucket bursts
    // (a heavy-tailed multiplier in 2 % of buckets), far from Poisson.
    const weeks = 4;
    let alarms = 0;
    for (const seed of [41, 42, 43]) {
      const r = rng(seed);
      let mood = 1;
      const counts = Array.from({ length: 2016 * weeks }, (_, i) => {
        if (i % 12 === 0) mood = Math.exp(0.4 * gauss(r));
        const daily = 30 * (1 + 0.6 * Math.sin((2 * Math.PI * i) / 288));
        const burst = r() < 0.02 ? 1 / Math.max(r(), 0.05) : 1;
        return poisson(r, daily * mood * burst);
      });
      alarms += feed(createSurgeState(), counts).length;
    }
    // Over the three series (the bar's first days of learning included).
    expect(alarms).toBeLessThanOrEqual(3 * weeks);
  });

  it('learns an hour-of-day pattern after two days and stops flagging it', () => {
    const r = rng(9);
    const state = createSurgeState();
    const daysFired = new Set<number>();
    for (let i = 0; i < 288 * 6; i++) {
      const t = T0 + i * B;
      const mean = hourOfDay(t) === 9 ? 80 : 20; // 09:00–10:00 UTC is always 4× busier
      const d = observeSurgeBucket(state, t, poisson(r, mean));
      if (d) daysFired.add(Math.floor(i / 288));
    }
    expect(daysFired.has(0)).toBe(true);
    expect([2, 3, 4, 5].some((d) => daysFired.has(d))).toBe(false);
    expect(Math.exp(state.seasonalOffset[9])).toBeGreaterThan(3);
  });

  it('a one-off surge does not become seasonal (median across days)', () => {
    const r = rng(10);
    const state = createSurgeState();
    for (let i = 0; i < 288 * 8; i++) {
      const t = T0 + i * B;
      const mean = hourOfDay(t) === 9 && i < 288 ? 200 : 20;
      observeSurgeBucket(state, t, poisson(r, mean));
    }
    expect(Math.exp(state.seasonalOffset[9])).toBeGreaterThan(0.7);
    expect(Math.exp(state.seasonalOffset[9])).toBeLessThan(1.4);
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
    const sizes = () => [state.seasonalResiduals.length, state.ringCount.length, state.seasonalHours.length];
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
    expect(() => createSurgeState({ minLift: -1 })).toThrow(/minLift/);
    expect(() => createSurgeState({ windowPseudoCount: 0 })).toThrow(/windowPseudoCount/);
    expect(() => createSurgeState({ seasonalMinDays: 8, seasonalDays: 7 })).toThrow(/seasonalMinDays/);
  });

  it('hourOfDay: slot 0 is 00:00 UTC, 23 is 23:00, before 1970 too', () => {
    expect(hourOfDay(T0)).toBe(0);
    expect(hourOfDay(T0 + 9 * 3_600_000 + 59 * 60_000)).toBe(9);
    expect(hourOfDay(T0 - 1)).toBe(23);
    expect(hourOfDay(-1)).toBe(23);
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

describe('trends.surge: seasonal lift, episodes and growth', () => {
  const DAY = 288;
  /** Gamma-Poisson draw (shape k: extra per-bucket noise of 1/√k), for bursty backgrounds. */
  function burstyCount(r: () => number, mean: number, k = 8): number {
    let g = 0;
    for (let i = 0; i < k; i++) g -= Math.log(r() || 1e-12);
    return poisson(r, (mean * g) / k);
  }
  /** Weekdays: 20 posts a bucket with a 4× peak 14:00–16:00 UTC (a market open); weekends: a third of that. */
  const weekly = (i: number): number => {
    const t = T0 + i * B;
    const weekend = [0, 6].includes(new Date(t).getUTCDay());
    const peak = !weekend && [14, 15].includes(hourOfDay(t)) ? 4 : 1;
    return 20 * peak * (weekend ? 1 / 3 : 1);
  };

  it('a daily routine peak and quiet weekends are the expectation, not surges', () => {
    const r = rng(21);
    const state = createSurgeState();
    const fired: number[] = [];
    for (let i = 0; i < 4 * 7 * DAY; i++) if (observeSurgeBucket(state, T0 + i * B, burstyCount(r, weekly(i)))) fired.push(i);
    // The first days learn the peak; from the second week on, neither peaks nor Mondays fire.
    expect(fired.filter((i) => i >= 7 * DAY)).toEqual([]);
    expect(state.weekendShift).toBeLessThan(Math.log(0.5));
  });

  /** Three bursty weeks (with ordinary 2.5× half hours twice a day), then a `factor`× surge from bucket `at` for `len` buckets. */
  function surgeRun(seed: number, factor: (j: number) => number, len: number, params = {}) {
    const r = rng(seed);
    const state = createSurgeState(params);
    const at = 3 * 7 * DAY + 2 * DAY + 10 * 12 + 7; // a Wednesday, 10:35 UTC
    const out: { index: number; d: SurgeDetection }[] = [];
    for (let i = 0; i < at + len + DAY; i++) {
      const burst = i % (DAY / 2) < 6 && i % DAY !== i % (DAY / 2) ? 2.5 : 1;
      const j = i - at;
      const mean = weekly(i) * burst * (j >= 0 && j < len ? factor(j) : 1);
      const d = observeSurgeBucket(state, T0 + i * B, burstyCount(r, mean));
      if (d && i >= 7 * DAY) out.push({ index: i, d });
    }
    return { at, out };
  }

  it('a 6× surge on a bursty background fires within 30 minutes of its start, once per episode', () => {
    for (const seed of [1, 2, 3]) {
      const { at, out } = surgeRun(seed, () => 6, 16);
      const inSurge = out.filter((o) => o.index >= at && o.index < at + 16 + 12);
      expect(inSurge).toHaveLength(1);
      const d = inSurge[0].d;
      expect(d.bucketEnd - (T0 + at * B)).toBeLessThanOrEqual(30 * 60_000);
      expect(d.count / d.baseline).toBeGreaterThan(3);
      expect(d.previous).toBeUndefined();
      // Nothing else outside the surge after the first week.
      expect(out.filter((o) => o.index < at || o.index >= at + 16 + 12)).toEqual([]);
    }
  });

  /** Two bursty weeks, then three days without data (as zeros, or told as a gap), then the same background again with a 6× surge a day later. */
  function holeRun(seed: number, hole: 'zeros' | 'gap') {
    const r = rng(seed);
    const state = createSurgeState();
    const [from, to] = [2 * 7 * DAY, 2 * 7 * DAY + 3 * DAY];
    const at = to + DAY + 10 * 12 + 7;
    const out: number[] = [];
    const level = { before: NaN, after: NaN };
    for (let i = 0; i < at + 2 * DAY; i++) {
      if (i === from) level.before = state.level;
      if (i === to) level.after = state.level;
      if (i >= from && i < to) {
        if (hole === 'gap') observeSurgeGap(state, T0 + i * B);
        else observeSurgeBucket(state, T0 + i * B, 0);
        continue;
      }
      const j = i - at;
      if (observeSurgeBucket(state, T0 + i * B, burstyCount(r, weekly(i) * (j >= 0 && j < 24 ? 6 : 1)))) out.push(i);
    }
    return { to, at, out, level, observed: state.observed };
  }

  it('hours without data are not silence: nothing learnt from them, no surge when the data resumes, the next real surge caught', () => {
    for (const seed of [1, 2, 3]) {
      // Fed as zeros, the hole drags the level (the expectation) down by a third or more.
      const zeros = holeRun(seed, 'zeros');
      expect(zeros.level.after).toBeLessThan(zeros.level.before - Math.log(1.4));
      const { to, at, out, level, observed } = holeRun(seed, 'gap');
      expect(level.after).toBe(level.before);
      expect(observed).toBe(zeros.observed - 3 * DAY);
      expect(out.filter((i) => i >= to && i < at)).toEqual([]);
      const caught = out.filter((i) => i >= at && i < at + 24);
      expect(caught).toHaveLength(1);
      expect((caught[0] + 1 - at) * B).toBeLessThanOrEqual(30 * 60_000);
    }
  });

  it('re-warms after a gap: the first buckets with data cannot fire until the short window holds them', () => {
    const state = createSurgeState();
    feed(state, poissonSeries(5, 3 * 288, () => 20));
    observeSurgeGap(state, T0 + 3 * 288 * B);
    const level = state.level;
    expect(state.ringFilled).toBe(0);
    const fired = feed(state, [400, 400, 400, 400], 3 * 288 + 1).map((o) => o.index - 3 * 288 - 1);
    expect(fired).toEqual([2]);
    expect(state.level).toBeGreaterThan(level); // learning resumed with the data
    observeSurgeGap(state, T0 + 10 * B); // at or before the last bucket fed: ignored
    expect(state.ringFilled).toBe(4);
  });

  it('a short surge fires the lift trigger on its own 15 minutes (liftShortTrigger) where the 45-minute lift window dilutes it', () => {
    // The learnt bars out of the way (threshold 50): the lift trigger alone.
    const liftOnly = { threshold: 50 };
    for (const seed of [1, 2, 3]) {
      const short = surgeRun(seed, () => 10, 3, liftOnly);
      const inSurge = short.out.filter((o) => o.index >= short.at && o.index < short.at + 3 + 6);
      expect(inSurge).toHaveLength(1);
      expect(inSurge[0].d).toMatchObject({ trigger: 'lift', windowBuckets: DEFAULT_SURGE_PARAMS.shortWindowBuckets, threshold: DEFAULT_SURGE_PARAMS.liftShortTrigger });
      expect(inSurge[0].d.bucketEnd - (T0 + short.at * B)).toBeLessThanOrEqual(30 * 60_000);
      expect(short.out.filter((o) => o.index < short.at || o.index >= short.at + 3 + 12)).toEqual([]);
      const longOnly = surgeRun(seed, () => 10, 3, { ...liftOnly, liftShortTrigger: 0 });
      expect(longOnly.out).toEqual([]);
    }
  });

  it('a surge that grows well past what was reported sends updates saying what each reported before', () => {
    // 6× for an hour, then 30×: the first event, then updates only as the lift triples.
    const { at, out } = surgeRun(4, (j) => (j < 12 ? 6 : 30), 3 * 12);
    const inSurge = out.filter((o) => o.index >= at && o.index < at + 4 * 12).map((o) => o.d);
    expect(inSurge.length).toBeGreaterThanOrEqual(2);
    expect(inSurge.length).toBeLessThanOrEqual(3);
    expect(inSurge[0].previous).toBeUndefined();
    for (let i = 1; i < inSurge.length; i++) {
      const u = inSurge[i];
      expect(u.trigger).toBe('lift');
      expect(u.episodeStart).toBe(inSurge[0].bucketStart);
      expect(u.previous!.count).toBe(inSurge[i - 1].count);
      expect(u.previous!.windowEnd).toBe(inSurge[i - 1].bucketEnd);
      expect(u.score).toBeGreaterThanOrEqual(3 * u.previous!.lift);
    }
    // The same surge held at 6× (no growth) gives the first event alone.
    const flat = surgeRun(4, () => 6, 16);
    expect(flat.out.filter((o) => o.index >= flat.at && o.index < flat.at + 4 * 12)).toHaveLength(1);
  });
});
