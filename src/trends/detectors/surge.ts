/**
 * `trends.surge`: a subreddit's posts per bucket far above its own norm.
 *
 * Causal and incremental: each bucket is scored against the state built from the buckets before
 * it, then folded into that state. Memory per subreddit is a fixed handful of numbers, a ring of
 * `windowBuckets` entries and, per hour-of-day slot (24), the last `seasonalDays` hourly log-ratios.
 *
 * Real post counts are bursty and heavy-tailed: a Poisson or variance-based z-score calls a
 * surge every day on them. So the model works on logarithms, where bursts are multiplicative:
 *
 *   expected (per bucket) = exp(level + seasonal offset of the bucket's hour of day) − k₁
 *   lift                  = (posts in the last W buckets + k_w) / (expected in them + k_w)
 *   score                 = ln(lift) / scale
 *
 * `level` is an EWMA of ln(count + k₁) with winsorised updates (a surge does not lift its own
 * baseline), the hour-of-day offset is the median of the last `seasonalDays` days (one-off days are
 * ignored), and `scale` is a robust EWMA of |ln lift| (mean absolute deviation × √(π/2), winsorised),
 * so each subreddit's own burstiness sets the bar. The pseudo-count k_w keeps a quiet subreddit's
 * 0 → 3 posts from looking like an infinite lift. An alert needs score ≥ threshold AND lift ≥
 * minLift AND ≥ minCount posts in the window; after it the subreddit is silent for `cooldownBuckets`
 * and then re-arms only once its score has dropped below the threshold: one alert per episode.
 */
import type { SurgeDetection } from '../../events/kinds/surge';
import { alphaFromHalfLife, resolveSurgeParams, SurgeParams } from './params';

const HOUR_MS = 3_600_000;
const SLOTS_PER_DAY = 24;
const SLOTS_PER_WEEK = 168;
/** 1970-01-01 was a Thursday; shifting by 72 h makes slot 0 Monday 00:00 UTC. */
const EPOCH_SLOT_SHIFT = 72;
/** √(π/2): mean absolute deviation → standard deviation for a normal variable. */
const MAD_TO_SD = Math.sqrt(Math.PI / 2);
/** Scale before any history, and its floor: a perfectly flat series still needs a visible lift. */
const INITIAL_LOG_SCALE = 0.5;
const MIN_LOG_SCALE = 0.05;

export interface SurgeState {
  readonly params: Readonly<SurgeParams>;
  /** Start of the last bucket folded in, or null before the first. */
  lastBucketStart: number | null;
  /** Buckets folded in since creation or the last long-gap reset. */
  observed: number;
  /** EWMA of ln(count + bucketPseudoCount) net of the hour-of-day offset (winsorised updates). */
  level: number;
  /** Robust scale of one bucket's log residual (winsorises the level's updates). */
  bucketScale: number;
  /** Robust scale of the window's ln lift (the score's denominator). */
  scale: number;
  /** Per hour-of-day slot, the last `seasonalDays` hourly mean log residuals, ring-ordered. */
  readonly seasonalResiduals: Float64Array;
  /** Per slot: full hours recorded so far. */
  readonly seasonalHours: Float64Array;
  /** Per slot: the log offset in use (0 until `seasonalMinDays` hours are recorded). */
  readonly seasonalOffset: Float64Array;
  /** Accumulator of the hour in progress. */
  hourSlot: number;
  hourStart: number;
  hourResidual: number;
  hourBuckets: number;
  /** First bucket start allowed to fire again. */
  cooldownUntil: number;
  /** True from an alert until the score drops below the threshold (one alert per episode). */
  inEpisode: boolean;
  /** Ring of the last buckets' count and expected count, for the window. */
  readonly ringCount: Float64Array;
  readonly ringExpected: Float64Array;
  ringPos: number;
  ringFilled: number;
  /** Score of the last bucket fed (0 during warm-up), for backtests and dashboards. */
  lastScore: number;
  /** Expected count of the last bucket fed (NaN during warm-up), for plots. */
  lastExpected: number;
  /**
   * Smallest count that would have fired the last bucket fed, given the window before it, the
   * threshold, minLift and minCount (cooldown and episode aside; NaN during warm-up), for plots.
   */
  lastUpper: number;
  readonly alphaLevel: number;
  readonly alphaScale: number;
  readonly bucketsPerHour: number;
}

export function createSurgeState(params: Partial<SurgeParams> = {}): SurgeState {
  const p = resolveSurgeParams(params);
  return {
    params: p,
    lastBucketStart: null,
    observed: 0,
    level: 0,
    bucketScale: INITIAL_LOG_SCALE,
    scale: INITIAL_LOG_SCALE,
    seasonalResiduals: new Float64Array(SLOTS_PER_DAY * p.seasonalDays),
    seasonalHours: new Float64Array(SLOTS_PER_DAY),
    seasonalOffset: new Float64Array(SLOTS_PER_DAY),
    hourSlot: -1,
    hourStart: -1,
    hourResidual: 0,
    hourBuckets: 0,
    cooldownUntil: -Infinity,
    inEpisode: false,
    ringCount: new Float64Array(p.windowBuckets),
    ringExpected: new Float64Array(p.windowBuckets),
    ringPos: 0,
    ringFilled: 0,
    lastScore: 0,
    lastExpected: NaN,
    lastUpper: NaN,
    alphaLevel: alphaFromHalfLife(p.levelHalfLifeBuckets),
    alphaScale: alphaFromHalfLife(p.scaleHalfLifeBuckets),
    bucketsPerHour: HOUR_MS / p.bucketMs,
  };
}

/** Hour-of-week slot (0 = Monday 00:00–01:00 UTC) of a timestamp. */
export function hourOfWeek(ms: number): number {
  const h = Math.floor(ms / HOUR_MS) + EPOCH_SLOT_SHIFT;
  return ((h % SLOTS_PER_WEEK) + SLOTS_PER_WEEK) % SLOTS_PER_WEEK;
}

/** Hour-of-day slot (0 = 00:00–01:00 UTC) of a timestamp. */
export function hourOfDay(ms: number): number {
  const h = Math.floor(ms / HOUR_MS);
  return ((h % SLOTS_PER_DAY) + SLOTS_PER_DAY) % SLOTS_PER_DAY;
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
 * level and scale and re-enters warm-up instead (hour-of-day offsets are kept).
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
  state.bucketScale = INITIAL_LOG_SCALE;
  state.scale = INITIAL_LOG_SCALE;
  state.ringPos = 0;
  state.ringFilled = 0;
  state.cooldownUntil = -Infinity;
  state.inEpisode = false;
  state.hourSlot = -1;
  state.hourBuckets = 0;
}

function update(state: SurgeState, start: number, count: number, evaluate: boolean): SurgeDetection | null {
  const p = state.params;
  const k1 = p.bucketPseudoCount;
  const kw = p.windowPseudoCount;
  const slot = hourOfDay(start);
  const logCount = Math.log(count + k1);
  const n = state.observed;
  state.lastBucketStart = start;

  if (n === 0) {
    // The first bucket seeds the level; there is nothing to score it against.
    state.level = logCount - state.seasonalOffset[slot];
    accumulateHour(state, start, slot, logCount - state.level);
    state.lastScore = 0;
    state.lastExpected = NaN;
    state.lastUpper = NaN;
    state.observed = 1;
    return null;
  }
  accumulateHour(state, start, slot, logCount - state.level);
  const seasonalReady = state.seasonalHours[slot] >= p.seasonalMinDays;
  const logExpected = state.level + state.seasonalOffset[slot];
  const expected = Math.max(Math.exp(logExpected) - k1, 0);

  // Ring holds the W most recent buckets including this one.
  const w = p.windowBuckets;
  state.ringCount[state.ringPos] = count;
  state.ringExpected[state.ringPos] = expected;
  state.ringPos = (state.ringPos + 1) % w;
  if (state.ringFilled < w) state.ringFilled++;
  let sumCount = 0;
  let sumExpected = 0;
  for (let i = 0; i < state.ringFilled; i++) {
    sumCount += state.ringCount[i];
    sumExpected += state.ringExpected[i];
  }
  const logLift = Math.log((sumCount + kw) / (sumExpected + kw));
  const score = logLift / state.scale;

  let detection: SurgeDetection | null = null;
  const warm = n >= p.warmupBuckets;
  state.lastScore = warm ? score : 0;
  state.lastExpected = warm ? expected : NaN;
  if (warm) {
    // Smallest window sum meeting the score, the lift and the minimum, less what the window holds already.
    const base = sumExpected + kw;
    const needed = Math.max(base * Math.exp(p.threshold * state.scale), base * p.minLift) - kw;
    state.lastUpper = Math.max(needed, p.minCount) - (sumCount - count);
    state.lastUpper = Math.max(state.lastUpper, 0);
  } else state.lastUpper = NaN;

  if (state.inEpisode && score < p.threshold) state.inEpisode = false;
  if (evaluate && warm && !state.inEpisode && start >= state.cooldownUntil) {
    if (score >= p.threshold && Math.exp(logLift) >= p.minLift && sumCount >= p.minCount) {
      const filled = state.ringFilled;
      detection = {
        kind: 'trends.surge',
        bucketStart: start - (filled - 1) * p.bucketMs,
        bucketEnd: start + p.bucketMs,
        count: sumCount,
        baseline: round4(sumExpected),
        // The spread under which the score reads as a z-score, so (count − baseline) / stddev = score
        // holds for every kind of detection the payload documents.
        stddev: round4((sumCount - sumExpected) / score),
        score: round4(score),
        threshold: p.threshold,
        windowBuckets: filled,
        seasonal: seasonalReady,
      };
      state.cooldownUntil = start + (p.cooldownBuckets + 1) * p.bucketMs;
      state.inEpisode = true;
    }
  }

  // Winsorised updates: a surge moves neither its own baseline nor the scale it is measured with much.
  const k = n + 1;
  const a = Math.max(state.alphaScale, 1 / k);
  const residual = clip(logCount - logExpected, p.clipZ * state.bucketScale);
  state.level += Math.max(state.alphaLevel, 1 / k) * residual;
  state.bucketScale = Math.max(MIN_LOG_SCALE, state.bucketScale + a * (MAD_TO_SD * Math.abs(residual) - state.bucketScale));
  const liftResidual = clip(logLift, p.clipZ * state.scale);
  state.scale = Math.max(MIN_LOG_SCALE, state.scale + a * (MAD_TO_SD * Math.abs(liftResidual) - state.scale));
  state.observed = k;
  return detection;
}

function clip(x: number, bound: number): number {
  return Math.max(-bound, Math.min(bound, x));
}

/**
 * Sum the log residuals (against the level, before the hour-of-day offset) of the hour in
 * progress; when the hour is complete, record its mean in the slot's ring and recompute the slot's
 * offset as the ring's median: a pattern that recurs daily is learnt, a one-off day is not.
 */
function accumulateHour(state: SurgeState, start: number, slot: number, residual: number): void {
  const hourStart = start - (((start % HOUR_MS) + HOUR_MS) % HOUR_MS);
  if (hourStart !== state.hourStart) {
    if (state.hourBuckets === state.bucketsPerHour && state.hourSlot >= 0) recordHour(state);
    state.hourStart = hourStart;
    state.hourSlot = slot;
    state.hourResidual = 0;
    state.hourBuckets = 0;
  }
  state.hourResidual += residual;
  state.hourBuckets++;
}

function recordHour(state: SurgeState): void {
  const p = state.params;
  const slot = state.hourSlot;
  const days = p.seasonalDays;
  const hours = state.seasonalHours[slot];
  state.seasonalResiduals[slot * days + (hours % days)] = state.hourResidual / state.hourBuckets;
  state.seasonalHours[slot] = hours + 1;
  const have = Math.min(hours + 1, days);
  state.seasonalOffset[slot] = hours + 1 >= p.seasonalMinDays ? median(state.seasonalResiduals, slot * days, have) : 0;
}

function median(values: Float64Array, offset: number, n: number): number {
  const v = Array.from(values.subarray(offset, offset + n)).sort((a, b) => a - b);
  return n % 2 === 1 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

function round4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
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
