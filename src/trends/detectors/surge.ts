/**
 * `trends.surge`: a subreddit's posts per bucket far above its own norm.
 *
 * Causal and incremental: each bucket is scored against the state built from the buckets before
 * it, then folded into that state. Memory per subreddit is a fixed handful of numbers, a ring of
 * `windowBuckets` entries and, per hour-of-week slot (168), the last `seasonalWeeks` hourly ratios.
 *
 * expected = level × seasonal factor of the bucket's hour-of-week (1 until learnt);
 * variance = max(expected + excess · expected², minVariance), i.e. at least Poisson;
 * score    = (count − expected) / √variance, for the bucket and for the last `windowBuckets`.
 */
import { alphaFromHalfLife, resolveSurgeParams, SurgeParams } from './params';

const HOUR_MS = 3_600_000;
const SLOTS = 168;
/** 1970-01-01 was a Thursday; shifting by 72 h makes slot 0 Monday 00:00 UTC. */
const EPOCH_SLOT_SHIFT = 72;
/** Seasonal factors are kept within these bounds: a slot is never assumed dead or 10× busier. */
const MIN_FACTOR = 0.1;
const MAX_FACTOR = 10;

export interface SurgeDetection {
  readonly kind: 'trends.surge';
  /** Start of the first bucket of the evidence window (ms since epoch). */
  readonly bucketStart: number;
  /** End (exclusive) of the bucket that fired. */
  readonly bucketEnd: number;
  /** Posts in the window. */
  readonly count: number;
  /** Posts expected in the window. */
  readonly baseline: number;
  readonly stddev: number;
  /** (count − baseline) / stddev. */
  readonly score: number;
  readonly threshold: number;
  /** 1 when the bucket alone fired, `windowBuckets` when the recent window did. */
  readonly windowBuckets: number;
  /** Whether the hour-of-week factor was part of the baseline. */
  readonly seasonal: boolean;
}

export interface SurgeState {
  readonly params: Readonly<SurgeParams>;
  /** Start of the last bucket folded in, or null before the first. */
  lastBucketStart: number | null;
  /** Buckets folded in since creation or the last long-gap reset. */
  observed: number;
  /** EWMA of the deseasonalised (and clipped) count. */
  level: number;
  /** Variance = expected + excess · expected²; excess = max(0, EWMA(residual² − expected) / EWMA(expected²)). */
  excess: number;
  excessNum: number;
  excessDen: number;
  /** Slow EWMA of counts; hourly ratios are measured against it. */
  reference: number;
  /** Per slot, the last `seasonalWeeks` hourly ratios (mean count + k) / (reference + k), ring-ordered. */
  readonly seasonalRatios: Float64Array;
  /** Per slot: full hours recorded so far. */
  readonly seasonalHours: Float64Array;
  /** Per slot: the factor in use (1 until `seasonalMinWeeks` hours are recorded). */
  readonly seasonalFactor: Float64Array;
  /** Accumulator of the hour in progress. */
  hourSlot: number;
  hourStart: number;
  hourCount: number;
  hourReference: number;
  hourBuckets: number;
  /** First bucket start allowed to fire again. */
  cooldownUntil: number;
  /** Ring of the last buckets' count, expected and variance (before the absolute floor), for the window score. */
  readonly ringCount: Float64Array;
  readonly ringExpected: Float64Array;
  readonly ringVariance: Float64Array;
  ringPos: number;
  ringFilled: number;
  /** Score of the last bucket fed (0 during warm-up), for backtests and dashboards. */
  lastScore: number;
  /** Expected count of the last bucket fed (NaN during warm-up), for plots. */
  lastExpected: number;
  /**
   * Smallest count that would have fired the last bucket fed, given its expected count, the
   * threshold and the minimums (cooldown aside; NaN during warm-up), for plots.
   */
  lastUpper: number;
  readonly alphaLevel: number;
  readonly alphaVariance: number;
  readonly alphaReference: number;
  readonly bucketsPerHour: number;
}

export function createSurgeState(params: Partial<SurgeParams> = {}): SurgeState {
  const p = resolveSurgeParams(params);
  return {
    params: p,
    lastBucketStart: null,
    observed: 0,
    level: 0,
    excess: 0,
    excessNum: 0,
    excessDen: 0,
    reference: 0,
    seasonalRatios: new Float64Array(SLOTS * p.seasonalWeeks),
    seasonalHours: new Float64Array(SLOTS),
    seasonalFactor: new Float64Array(SLOTS).fill(1),
    hourSlot: -1,
    hourStart: -1,
    hourCount: 0,
    hourReference: 0,
    hourBuckets: 0,
    cooldownUntil: -Infinity,
    ringCount: new Float64Array(p.windowBuckets),
    ringExpected: new Float64Array(p.windowBuckets),
    ringVariance: new Float64Array(p.windowBuckets),
    ringPos: 0,
    ringFilled: 0,
    lastScore: 0,
    lastExpected: NaN,
    lastUpper: NaN,
    alphaLevel: alphaFromHalfLife(p.levelHalfLifeBuckets),
    alphaVariance: alphaFromHalfLife(p.varianceHalfLifeBuckets),
    alphaReference: alphaFromHalfLife(p.referenceHalfLifeBuckets),
    bucketsPerHour: HOUR_MS / p.bucketMs,
  };
}

/** Hour-of-week slot (0 = Monday 00:00–01:00 UTC) of a timestamp. */
export function hourOfWeek(ms: number): number {
  const h = Math.floor(ms / HOUR_MS) + EPOCH_SLOT_SHIFT;
  return ((h % SLOTS) + SLOTS) % SLOTS;
}

/** Start of the bucket containing `ms`. */
export function bucketStartOf(ms: number, bucketMs: number): number {
  return Math.floor(ms / bucketMs) * bucketMs;
}

/**
 * Feed one bucket's post count; returns a detection or null.
 *
 * `bucketStartMs` is floored to the bucket grid. A bucket at or before the last one fed is ignored
 * (replays are harmless). Missing buckets between the last one and this one are folded in as zero
 * counts (they are not scored: nothing can fire on them); a gap longer than `maxGapBuckets` resets
 * level and variance and re-enters warm-up instead (seasonal ratios are kept).
 */
export function observeSurgeBucket(state: SurgeState, bucketStartMs: number, count: number): SurgeDetection | null {
  if (!Number.isFinite(bucketStartMs)) throw new RangeError('bucketStartMs must be a finite number');
  if (!Number.isFinite(count) || count < 0) throw new RangeError('count must be a finite number ≥ 0');
  const b = state.params.bucketMs;
  const start = bucketStartOf(bucketStartMs, b);
  const last = state.lastBucketStart;
  if (last !== null) {
    if (start <= last) return null;
    const missing = Math.round((start - last) / b) - 1;
    if (missing > state.params.maxGapBuckets) resetLevels(state);
    else for (let i = 1; i <= missing; i++) update(state, last + i * b, 0, false);
  }
  return update(state, start, count, true);
}

function resetLevels(state: SurgeState): void {
  state.observed = 0;
  state.level = 0;
  state.excess = 0;
  state.excessNum = 0;
  state.excessDen = 0;
  state.reference = 0;
  state.ringPos = 0;
  state.ringFilled = 0;
  state.cooldownUntil = -Infinity;
  state.hourSlot = -1;
  state.hourBuckets = 0;
}

function update(state: SurgeState, start: number, count: number, evaluate: boolean): SurgeDetection | null {
  const p = state.params;
  const slot = hourOfWeek(start);
  accumulateHour(state, start, slot, count);
  const seasonalReady = state.seasonalHours[slot] >= p.seasonalMinWeeks;
  const factor = state.seasonalFactor[slot];
  const n = state.observed;
  state.lastBucketStart = start;

  if (n === 0) {
    // The first bucket seeds level and reference; there is nothing to score it against.
    state.level = count / factor;
    state.reference = count;
    state.lastScore = 0;
    state.lastExpected = NaN;
    state.lastUpper = NaN;
    state.observed = 1;
    return null;
  }
  let detection: SurgeDetection | null = null;
  const expected = state.level * factor;
  // Negative-binomial variance: Poisson part plus a learnt quadratic excess (bursty subreddits'
  // excess grows with the square of their level, so a single ratio would misjudge peaks vs troughs).
  const modelVariance = expected + state.excess * expected * expected;
  // The absolute floor applies to what is scored (this bucket, or the window's sum), not per bucket:
  // summing per-bucket floors would make windows blind on quiet subreddits.
  const variance = Math.max(modelVariance, p.minVariance);
  const sd = Math.sqrt(variance);
  const z1 = (count - expected) / sd;

  // Ring holds the W most recent buckets including this one.
  const w = p.windowBuckets;
  state.ringCount[state.ringPos] = count;
  state.ringExpected[state.ringPos] = expected;
  state.ringVariance[state.ringPos] = modelVariance;
  state.ringPos = (state.ringPos + 1) % w;
  if (state.ringFilled < w) state.ringFilled++;
  let zw = -Infinity;
  let sumCount = 0;
  let sumExpected = 0;
  let sumVariance = 0;
  if (w > 1 && state.ringFilled === w) {
    for (let i = 0; i < w; i++) {
      sumCount += state.ringCount[i];
      sumExpected += state.ringExpected[i];
      sumVariance += state.ringVariance[i];
    }
    sumVariance = Math.max(sumVariance, p.minVariance);
    zw = (sumCount - sumExpected) / Math.sqrt(sumVariance);
  }

  const warm = n >= p.warmupBuckets;
  state.lastScore = warm ? Math.max(z1, zw) : 0;
  state.lastExpected = warm ? expected : NaN;
  if (warm) {
    const upper1 = Math.max(expected + p.threshold * sd, p.minCount);
    const prev = sumCount - count;
    const upperW = zw === -Infinity ? Infinity : Math.max(sumExpected + p.threshold * Math.sqrt(sumVariance) - prev, p.minCount - prev, expected);
    state.lastUpper = Math.min(upper1, upperW);
  } else state.lastUpper = NaN;
  if (evaluate && warm && start >= state.cooldownUntil) {
    if (z1 >= p.threshold && count >= p.minCount) {
      detection = makeDetection(start, start, count, expected, sd, z1, p.threshold, 1, seasonalReady, p.bucketMs);
    } else if (zw >= p.threshold && sumCount >= p.minCount && count > expected && start - (w - 1) * p.bucketMs >= state.cooldownUntil) {
      // The window fires only while the surge is still on (this bucket above expected), and only on
      // buckets all past the cooldown (else it would re-fire on what the cooldown suppressed).
      const first = start - (w - 1) * p.bucketMs;
      detection = makeDetection(first, start, sumCount, sumExpected, Math.sqrt(sumVariance), zw, p.threshold, w, seasonalReady, p.bucketMs);
    }
    if (detection) state.cooldownUntil = start + (p.cooldownBuckets + 1) * p.bucketMs;
  }

  // Robust update: a surge must not lift its own baseline much, or long surges would hide.
  const clipped = Math.min(count, expected + p.clipZ * sd);
  const resid = clipped - expected;
  const k = n + 1;
  state.level += Math.max(state.alphaLevel, 1 / k) * (clipped / factor - state.level);
  const av = Math.max(state.alphaVariance, 1 / k);
  state.excessNum += av * (resid * resid - expected - state.excessNum);
  state.excessDen += av * (expected * expected - state.excessDen);
  state.excess = state.excessDen > 0 ? Math.max(0, state.excessNum / state.excessDen) : 0;
  state.reference += Math.max(state.alphaReference, 1 / k) * (clipped - state.reference);
  state.observed = k;
  return detection;
}

/**
 * Sum the raw counts of the hour in progress; when the hour is complete, record its ratio to the
 * reference in the slot's ring and recompute the slot's factor. Raw, not clipped, counts: the
 * median across weeks is what protects the factor from one-off surges.
 */
function accumulateHour(state: SurgeState, start: number, slot: number, count: number): void {
  const hourStart = start - (((start % HOUR_MS) + HOUR_MS) % HOUR_MS);
  if (hourStart !== state.hourStart) {
    if (state.hourBuckets === state.bucketsPerHour && state.hourSlot >= 0) recordHour(state);
    state.hourStart = hourStart;
    state.hourSlot = slot;
    state.hourCount = 0;
    state.hourReference = 0;
    state.hourBuckets = 0;
  }
  // The reference before this bucket: the norm the hour is compared against.
  state.hourReference += state.observed === 0 ? count : state.reference;
  state.hourCount += count;
  state.hourBuckets++;
}

function recordHour(state: SurgeState): void {
  const p = state.params;
  const slot = state.hourSlot;
  const k = p.seasonalPseudoCount;
  const ratio = (state.hourCount / state.hourBuckets + k) / (state.hourReference / state.hourBuckets + k);
  const weeks = p.seasonalWeeks;
  const hours = state.seasonalHours[slot];
  state.seasonalRatios[slot * weeks + (hours % weeks)] = ratio;
  state.seasonalHours[slot] = hours + 1;
  const have = Math.min(hours + 1, weeks);
  state.seasonalFactor[slot] = hours + 1 >= p.seasonalMinWeeks ? clampFactor(robustCentre(state.seasonalRatios, slot * weeks, have)) : 1;
}

/** Median of `n` values; for an even count, the middle value nearer 1 (the cautious choice). */
function robustCentre(values: Float64Array, offset: number, n: number): number {
  const v = Array.from(values.subarray(offset, offset + n)).sort((a, b) => a - b);
  if (n % 2 === 1) return v[(n - 1) / 2];
  const lo = v[n / 2 - 1];
  const hi = v[n / 2];
  return Math.abs(Math.log(lo)) <= Math.abs(Math.log(hi)) ? lo : hi;
}

function clampFactor(f: number): number {
  return Math.min(MAX_FACTOR, Math.max(MIN_FACTOR, f));
}

function round4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

function makeDetection(
  first: number,
  current: number,
  count: number,
  baseline: number,
  sd: number,
  score: number,
  threshold: number,
  windowBuckets: number,
  seasonal: boolean,
  bucketMs: number,
): SurgeDetection {
  return {
    kind: 'trends.surge',
    bucketStart: first,
    bucketEnd: current + bucketMs,
    count,
    baseline: round4(baseline),
    stddev: round4(sd),
    score: round4(score),
    threshold,
    windowBuckets,
    seasonal,
  };
}

/**
 * Contiguous buckets from sparse ones: sorted by start, duplicates summed, missing buckets between
 * the first and last given as count 0. Starts are floored to the grid.
 */
export function fillSurgeGaps(
  buckets: readonly { bucketStart: number; count: number }[],
  bucketMs: number = resolveSurgeParams().bucketMs,
): { bucketStart: number; count: number }[] {
  if (!(Number.isInteger(bucketMs) && bucketMs > 0)) throw new RangeError('bucketMs must be a positive integer');
  if (buckets.length === 0) return [];
  const sums = new Map<number, number>();
  for (const { bucketStart, count } of buckets) {
    if (!Number.isFinite(bucketStart)) throw new RangeError('bucketStart must be finite');
    const s = bucketStartOf(bucketStart, bucketMs);
    sums.set(s, (sums.get(s) ?? 0) + count);
  }
  const starts = [...sums.keys()].sort((a, b) => a - b);
  const out: { bucketStart: number; count: number }[] = [];
  for (let t = starts[0]; t <= starts[starts.length - 1]; t += bucketMs) out.push({ bucketStart: t, count: sums.get(t) ?? 0 });
  return out;
}
