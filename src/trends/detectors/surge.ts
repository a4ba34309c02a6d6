/**
 * `trends.surge`: a subreddit's posts per bucket far above its own norm.
 *
 * Causal and incremental: each bucket is scored against the state built from the buckets before
 * it, then folded into that state. Memory per subreddit is a fixed handful of numbers, a ring of
 * `windowBuckets` entries, per hour-of-day slot (24) the last `seasonalDays` hourly log-ratios,
 * and per time scale the last `barDays` daily maxima of its score.
 *
 * Real post counts are bursty and heavy-tailed, and a subreddit's kind of burstiness is its own.
 * The model works on logarithms, where bursts are multiplicative, at two time scales (a short
 * window of `shortWindowBuckets`, 15 minutes, and a long one of `windowBuckets`, 3 hours):
 *
 *   expected (per bucket) = exp(level + seasonal offset of the bucket's hour of day) − k₁
 *   lift (per scale)      = (posts in the window + k_w) / (expected in the window + k_w)
 *   score (per scale)     = ln(lift) / scale (a robust EWMA of |ln lift| at that time scale)
 *
 * The bar each scale's score must reach is the series' own: the `barRank`-th highest of that
 * score's daily maxima over the last `barDays` days, plus `barMargin`, never below `threshold`. A
 * quiet subreddit whose normal is a spike every day thus raises its own bar above those spikes,
 * while a steady one keeps the floor; with a rank above 1, one or two surge days in the history do
 * not blind it to the next. An alert needs, at one scale, score ≥ bar AND lift ≥ minLift AND ≥
 * minCount posts in the window; after it the subreddit is silent for `cooldownBuckets` and then
 * re-arms only once every scale's score has dropped below its bar: one alert per episode.
 * (`trimBuckets: 1` counts each window's busiest bucket as its second busiest: a variant the
 * validation rejected, kept so the bench can show why.)
 */
import type { SurgeDetection } from '../../events/kinds/surge';
import { alphaFromHalfLife, resolveSurgeParams, SurgeParams } from './params';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const SLOTS_PER_DAY = 24;
const SLOTS_PER_WEEK = 168;
/** Weekend hours whose residuals give the weekend's shift (one weekend), and how many it needs first. */
const WEEKEND_RING_HOURS = 48;
const WEEKEND_MIN_HOURS = 12;
/** 1970-01-01 was a Thursday; shifting by 72 h makes slot 0 Monday 00:00 UTC. */
const EPOCH_SLOT_SHIFT = 72;
/** √(π/2): mean absolute deviation → standard deviation for a normal variable. */
const MAD_TO_SD = Math.sqrt(Math.PI / 2);
/** Scale before any history, and its floor: a perfectly flat series still needs a visible lift. */
const INITIAL_LOG_SCALE = 0.5;
const MIN_LOG_SCALE = 0.05;
/** Daily maxima needed before the series' own bar is used (until then: `threshold`). */
const MIN_BAR_DAYS = 2;

export interface SurgeState {
  readonly params: Readonly<SurgeParams>;
  /** Start of the last bucket folded in, or null before the first. */
  lastBucketStart: number | null;
  /** Buckets folded in since creation or the last long-gap reset. */
  observed: number;
  /** Buckets with data still to fold in after a stretch without data before any can fire (`observeSurgeGap`). */
  rewarmLeft: number;
  /** EWMA of ln(count + bucketPseudoCount) net of the hour-of-day offset (winsorised updates). */
  level: number;
  /** Robust scale of one bucket's log residual (winsorises the level's updates). */
  bucketScale: number;
  /** Per hour of the day (UTC), the last `seasonalDays` weekdays' hourly mean log residuals, ring-ordered. */
  readonly seasonalResiduals: Float64Array;
  /** Per slot: full hours recorded so far. */
  readonly seasonalHours: Float64Array;
  /** Per slot: the log offset in use (0 until `seasonalMinDays` hours are recorded). */
  readonly seasonalOffset: Float64Array;
  /** The last weekend hours' mean log residuals net of their hour's offset, ring-ordered, and how many were recorded. */
  readonly weekendResiduals: Float64Array;
  weekendHours: number;
  /** Log shift of a Saturday or Sunday hour (UTC) against a weekday's same hour: their median, once `WEEKEND_MIN_HOURS` were recorded. */
  weekendShift: number;
  /** Accumulator of the hour in progress. */
  hourSlot: number;
  hourStart: number;
  hourResidual: number;
  hourBuckets: number;
  /** First bucket start allowed to fire again. */
  cooldownUntil: number;
  /**
   * True from an alert until every scale's score drops below its bar and every lift window's lift
   * below `episodeEndLift` (one alert per episode, growth aside).
   */
  inEpisode: boolean;
  /** The episode's highest lift reported so far (an update needs `regrowFactor` times it), its posts and window end. */
  reportedLift: number;
  reportedCount: number;
  reportedWindowEnd: number;
  /** Start of the window of the episode's first alert. */
  episodeStart: number;
  /** Window lengths of the lift trigger (`liftWindowBuckets`, then the short window when `liftShortTrigger` is set; none when `liftTrigger` is 0)… */
  readonly liftWindows: readonly number[];
  /** …and the lift each must reach (`liftTrigger`, `liftShortTrigger`). */
  readonly liftTriggers: readonly number[];
  /** Per lift window: robust scale of its ln lift (winsorised like `scales`), which `liftMinScore` is measured in. */
  readonly liftScales: Float64Array;
  /** Ring of the last buckets' count and expected count, for the windows. */
  readonly ringCount: Float64Array;
  readonly ringExpected: Float64Array;
  ringPos: number;
  ringFilled: number;
  /** Window lengths of the time scales scored (short first; one entry when the short one is off). */
  readonly scaleWindows: readonly number[];
  /** Per time scale: robust scale of the window's ln lift (the score's denominator). */
  readonly scales: Float64Array;
  /** Per time scale: the bar its score must reach (the series' own, floored at `threshold`). */
  readonly bars: Float64Array;
  /** Per time scale: the last `barDays` daily maxima of its score, ring-ordered. */
  readonly dailyMax: Float64Array;
  /** Per time scale: the maximum score of the day in progress. */
  readonly dayMax: Float64Array;
  /** Days recorded in `dailyMax` so far, and buckets scored in the day in progress. */
  days: number;
  dayBuckets: number;
  /** Score of the last bucket fed (the highest score/bar ratio's score; 0 during warm-up), for backtests and dashboards. */
  lastScore: number;
  /** Expected count of the last bucket fed (NaN during warm-up), for plots. */
  lastExpected: number;
  /**
   * Smallest count that would have fired the last bucket fed, given the window before it, the
   * bars, minLift and minCount (cooldown and episode aside; NaN during warm-up, Infinity when no
   * count can, the busiest bucket being left out), for plots.
   */
  lastUpper: number;
  readonly alphaLevel: number;
  readonly alphaScale: number;
  readonly bucketsPerHour: number;
  readonly bucketsPerDay: number;
}

export function createSurgeState(params: Partial<SurgeParams> = {}): SurgeState {
  const p = resolveSurgeParams(params);
  const scaleWindows = p.shortWindowBuckets > 0 ? [p.shortWindowBuckets, p.windowBuckets] : [p.windowBuckets];
  const k = scaleWindows.length;
  return {
    params: p,
    lastBucketStart: null,
    observed: 0,
    rewarmLeft: 0,
    level: 0,
    bucketScale: INITIAL_LOG_SCALE,
    seasonalResiduals: new Float64Array(SLOTS_PER_DAY * p.seasonalDays),
    seasonalHours: new Float64Array(SLOTS_PER_DAY),
    seasonalOffset: new Float64Array(SLOTS_PER_DAY),
    weekendResiduals: new Float64Array(WEEKEND_RING_HOURS),
    weekendHours: 0,
    weekendShift: 0,
    hourSlot: -1,
    hourStart: -1,
    hourResidual: 0,
    hourBuckets: 0,
    cooldownUntil: -Infinity,
    inEpisode: false,
    reportedLift: 0,
    reportedCount: 0,
    reportedWindowEnd: 0,
    episodeStart: 0,
    liftWindows: p.liftTrigger <= 0 ? [] : p.liftShortTrigger > 0 && p.shortWindowBuckets > 0 ? [p.liftWindowBuckets, p.shortWindowBuckets] : [p.liftWindowBuckets],
    liftTriggers: p.liftTrigger <= 0 ? [] : p.liftShortTrigger > 0 && p.shortWindowBuckets > 0 ? [p.liftTrigger, p.liftShortTrigger] : [p.liftTrigger],
    liftScales: new Float64Array(2).fill(INITIAL_LOG_SCALE),
    ringCount: new Float64Array(Math.max(p.windowBuckets, p.liftWindowBuckets)),
    ringExpected: new Float64Array(Math.max(p.windowBuckets, p.liftWindowBuckets)),
    ringPos: 0,
    ringFilled: 0,
    scaleWindows,
    scales: new Float64Array(k).fill(INITIAL_LOG_SCALE),
    bars: new Float64Array(k).fill(p.threshold),
    dailyMax: new Float64Array(k * p.barDays),
    dayMax: new Float64Array(k).fill(-Infinity),
    days: 0,
    dayBuckets: 0,
    lastScore: 0,
    lastExpected: NaN,
    lastUpper: NaN,
    alphaLevel: alphaFromHalfLife(p.levelHalfLifeBuckets),
    alphaScale: alphaFromHalfLife(p.scaleHalfLifeBuckets),
    bucketsPerHour: HOUR_MS / p.bucketMs,
    bucketsPerDay: Math.round(DAY_MS / p.bucketMs),
  };
}

/** Hour-of-week slot (0 = Monday 00:00–01:00 UTC) of a timestamp. */
export function hourOfWeek(ms: number): number {
  const h = Math.floor(ms / HOUR_MS) + EPOCH_SLOT_SHIFT;
  return ((h % SLOTS_PER_WEEK) + SLOTS_PER_WEEK) % SLOTS_PER_WEEK;
}

/** Seasonal slot of a timestamp: its UTC hour of the day, plus 24 on Saturdays and Sundays (UTC). */
export function seasonalSlot(ms: number): number {
  const day = Math.floor(ms / DAY_MS);
  const weekday = (((day + 4) % 7) + 7) % 7; // 0 = Sunday (1970-01-01 was a Thursday)
  return hourOfDay(ms) + (weekday === 0 || weekday === 6 ? SLOTS_PER_DAY : 0);
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
 * level, scales and bars and re-enters warm-up instead (hour-of-day offsets are kept).
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

/**
 * A bucket without data (ingestion was down, or a replayed file has a hole there): unknown, not a
 * zero count. Nothing is learnt from it and nothing can fire on it; the windows, which would span
 * it, start afresh after it, the hour in progress is not recorded, and the next buckets with data
 * fire only once the short window holds `shortWindowBuckets` of them (a re-warm). Level, scales,
 * bars and hour-of-day offsets keep what they learnt before it. Call it for each such bucket (or
 * its last one), in order with `observeSurgeBucket`; one at or before the last bucket fed is ignored.
 */
export function observeSurgeGap(state: SurgeState, bucketStartMs: number): void {
  if (!Number.isFinite(bucketStartMs)) throw new RangeError('bucketStartMs must be a finite number');
  const start = bucketStartOf(bucketStartMs, state.params.bucketMs);
  if (state.lastBucketStart !== null && start <= state.lastBucketStart) return;
  state.lastBucketStart = start;
  state.ringPos = 0;
  state.ringFilled = 0;
  state.hourStart = -1;
  state.hourSlot = -1;
  state.hourBuckets = 0;
  state.rewarmLeft = Math.max(state.params.shortWindowBuckets, 1);
  state.lastScore = 0;
  state.lastExpected = NaN;
  state.lastUpper = NaN;
}

/**
 * A source counted in a bucket already folded in no longer counts there (its only post in that
 * bucket was removed on Reddit): the bucket's count in the windows' ring drops by one, so the
 * windows scored from now on leave it out. The level and scales it already moved keep what they
 * learnt. False when the bucket has left the ring (older than the longest window) or was never in it.
 */
export function forgetSurgeSource(state: SurgeState, bucketStartMs: number): boolean {
  const last = state.lastBucketStart;
  if (last === null) return false;
  const back = Math.round((last - bucketStartOf(bucketStartMs, state.params.bucketMs)) / state.params.bucketMs);
  if (back < 0 || back >= state.ringFilled) return false;
  const cap = state.ringCount.length;
  const idx = (state.ringPos - 1 - back + cap) % cap;
  if (state.ringCount[idx] <= 0) return false;
  state.ringCount[idx] -= 1;
  return true;
}

function resetLevels(state: SurgeState): void {
  state.observed = 0;
  state.rewarmLeft = 0;
  state.level = 0;
  state.bucketScale = INITIAL_LOG_SCALE;
  state.scales.fill(INITIAL_LOG_SCALE);
  state.liftScales.fill(INITIAL_LOG_SCALE);
  state.bars.fill(state.params.threshold);
  state.dayMax.fill(-Infinity);
  state.days = 0;
  state.dayBuckets = 0;
  state.ringPos = 0;
  state.ringFilled = 0;
  state.cooldownUntil = -Infinity;
  state.inEpisode = false;
  state.hourSlot = -1;
  state.hourBuckets = 0;
}

/** Per-scale figures of the bucket being scored (module scratch: calls are synchronous). */
const scratch = { sum: new Float64Array(4), expected: new Float64Array(4), trimmed: new Float64Array(4), trimmedExpected: new Float64Array(4), logLift: new Float64Array(4), score: new Float64Array(4), othersSum: new Float64Array(4), othersMax: new Float64Array(4), othersSecond: new Float64Array(4), filled: new Float64Array(4) };

function update(state: SurgeState, start: number, count: number, evaluate: boolean): SurgeDetection | null {
  const p = state.params;
  const k1 = p.bucketPseudoCount;
  const kw = p.windowPseudoCount;
  const slot = seasonalSlot(start);
  const logCount = Math.log(count + k1);
  const n = state.observed;
  state.lastBucketStart = start;

  if (n === 0) {
    // The first bucket seeds the level; there is nothing to score it against.
    state.level = logCount - offsetOf(state, slot);
    accumulateHour(state, start, slot, logCount - state.level);
    state.lastScore = 0;
    state.lastExpected = NaN;
    state.lastUpper = NaN;
    state.observed = 1;
    return null;
  }
  accumulateHour(state, start, slot, logCount - state.level);
  const seasonalReady = state.seasonalHours[slot] >= p.seasonalMinDays;
  const logExpected = state.level + offsetOf(state, slot);
  const expected = Math.max(Math.exp(logExpected) - k1, 0);

  // Ring holds the most recent buckets including this one, newest at ringPos − 1.
  const cap = state.ringCount.length;
  state.ringCount[state.ringPos] = count;
  state.ringExpected[state.ringPos] = expected;
  state.ringPos = (state.ringPos + 1) % cap;
  if (state.ringFilled < cap) state.ringFilled++;

  // Window sums per scale, walking back from the newest bucket; the busiest bucket is left out.
  const windows = state.scaleWindows;
  const nScales = windows.length;
  const s = scratch;
  let sum = 0;
  let sumExp = 0;
  let max = -Infinity;
  let second = -Infinity;
  let othersMax = -Infinity;
  let othersSecond = -Infinity;
  let j = 0;
  for (let i = 0; i < state.ringFilled && j < nScales; i++) {
    const idx = (state.ringPos - 1 - i + cap) % cap;
    const c = state.ringCount[idx];
    sum += c;
    sumExp += state.ringExpected[idx];
    if (c > max) {
      second = max;
      max = c;
    } else if (c > second) second = c;
    if (i > 0) {
      if (c > othersMax) {
        othersSecond = othersMax;
        othersMax = c;
      } else if (c > othersSecond) othersSecond = c;
    }
    const filled = i + 1;
    {
      while (j < nScales && (filled === windows[j] || (i === state.ringFilled - 1 && windows[j] >= filled))) {
        s.filled[j] = filled;
        s.sum[j] = sum;
        s.expected[j] = sumExp;
        const trim = p.trimBuckets > 0 && filled > 1;
        s.trimmed[j] = trim ? sum - max + second : sum;
        s.trimmedExpected[j] = sumExp;
        s.othersSum[j] = sum - count;
        s.othersMax[j] = othersMax;
        s.othersSecond[j] = othersSecond;
        s.logLift[j] = Math.log((s.trimmed[j] + kw) / (s.trimmedExpected[j] + kw));
        s.score[j] = s.logLift[j] / state.scales[j];
        j++;
      }
    }
  }

  let detection: SurgeDetection | null = null;
  const warm = n >= p.warmupBuckets && state.rewarmLeft <= 1;
  if (state.rewarmLeft > 0) state.rewarmLeft--;
  // The scale closest to (or furthest past) its bar speaks for the bucket.
  let lead = 0;
  for (let k = 1; k < nScales; k++) if (s.score[k] - state.bars[k] > s.score[lead] - state.bars[lead]) lead = k;
  state.lastScore = warm ? s.score[lead] : 0;
  state.lastExpected = warm ? expected : NaN;
  const lf = liftFigures(state);
  state.lastUpper = warm ? upperBound(state, s, nScales) : NaN;

  let anyOver = false;
  let fired = -1;
  for (let k = 0; k < nScales; k++) {
    if (s.score[k] >= state.bars[k]) anyOver = true;
    if (fired < 0 && s.score[k] >= state.bars[k] && Math.exp(s.logLift[k]) >= p.minLift && s.trimmed[k] >= p.minCount) fired = k;
  }
  // The lift trigger: the seasonal lift alone, whatever the subreddit's learnt burstiness (bars).
  let liftFired = -1;
  let maxLift = 0;
  let maxLiftAt = -1;
  for (let k = 0; k < lf.n; k++) {
    if (lf.lift[k] > maxLift) [maxLift, maxLiftAt] = [lf.lift[k], k];
    if (liftFired < 0 && lf.lift[k] >= state.liftTriggers[k] && Math.log(lf.lift[k]) >= p.liftMinScore * state.liftScales[k] && lf.sum[k] >= p.minCount) liftFired = k;
  }
  if (state.inEpisode && !anyOver && maxLift < p.episodeEndLift) state.inEpisode = false;
  if (evaluate && warm) {
    if (!state.inEpisode && start >= state.cooldownUntil && (liftFired >= 0 || fired >= 0)) {
      detection = liftFired >= 0 ? liftDetection(state, lf, liftFired, start, seasonalReady) : scoreDetection(state, s, fired, start, seasonalReady);
      state.episodeStart = detection.bucketStart;
      state.reportedLift = Math.max(maxLift, (detection.count + kw) / (detection.baseline + kw));
      state.reportedCount = detection.count;
      state.reportedWindowEnd = detection.bucketEnd;
      state.cooldownUntil = start + (p.cooldownBuckets + 1) * p.bucketMs;
      state.inEpisode = true;
    } else if (state.inEpisode && p.regrowFactor > 0 && maxLiftAt >= 0 && maxLift >= p.regrowFactor * state.reportedLift && lf.sum[maxLiftAt] >= p.minCount) {
      // The episode grew well past what was reported: one update, saying what it reported before.
      const grown = liftDetection(state, lf, maxLiftAt, start, seasonalReady);
      detection = { ...grown, episodeStart: state.episodeStart, previous: { lift: round4(state.reportedLift), count: state.reportedCount, windowEnd: state.reportedWindowEnd } };
      state.reportedLift = maxLift;
      state.reportedCount = grown.count;
      state.reportedWindowEnd = grown.bucketEnd;
    }
  }

  // Winsorised updates: a surge moves neither its own baseline nor the scales it is measured with much.
  const kObs = n + 1;
  const a = Math.max(state.alphaScale, 1 / kObs);
  const residual = clip(logCount - logExpected, p.clipZ * state.bucketScale);
  state.level += Math.max(state.alphaLevel, 1 / kObs) * residual;
  state.bucketScale = Math.max(MIN_LOG_SCALE, state.bucketScale + a * (MAD_TO_SD * Math.abs(residual) - state.bucketScale));
  for (let k = 0; k < nScales; k++) {
    const liftResidual = clip(s.logLift[k], p.clipZ * state.scales[k]);
    state.scales[k] = Math.max(MIN_LOG_SCALE, state.scales[k] + a * (MAD_TO_SD * Math.abs(liftResidual) - state.scales[k]));
  }
  for (let k = 0; k < lf.n; k++) {
    const liftResidual = clip(Math.log(lf.lift[k]), p.clipZ * state.liftScales[k]);
    state.liftScales[k] = Math.max(MIN_LOG_SCALE, state.liftScales[k] + a * (MAD_TO_SD * Math.abs(liftResidual) - state.liftScales[k]));
  }
  if (warm) trackBars(state, s.score, nScales);
  state.observed = kObs;
  return detection;
}

/** A window's figures, whichever trigger judged it: `score` reached `threshold`. */
interface WindowFigures {
  trigger: 'score' | 'lift';
  filled: number;
  sum: number;
  expected: number;
  score: number;
  threshold: number;
}

function detectionOf(state: SurgeState, w: WindowFigures, start: number, seasonal: boolean): SurgeDetection {
  const p = state.params;
  return {
    kind: 'trends.surge',
    trigger: w.trigger,
    bucketStart: start - (w.filled - 1) * p.bucketMs,
    bucketEnd: start + p.bucketMs,
    count: w.sum,
    baseline: round4(w.expected),
    // The spread under which the score reads as a z-score, so (count − baseline) / stddev = score
    // holds for every kind of detection the payload documents.
    stddev: round4((w.sum - w.expected) / w.score),
    score: round4(w.score),
    threshold: w.threshold,
    windowBuckets: w.filled,
    seasonal,
  };
}

/** A detection by the learnt bar of time scale `k`. */
function scoreDetection(state: SurgeState, s: typeof scratch, k: number, start: number, seasonal: boolean): SurgeDetection {
  return detectionOf(state, { trigger: 'score', filled: s.filled[k], sum: s.sum[k], expected: s.expected[k], score: s.score[k], threshold: round4(state.bars[k]) }, start, seasonal);
}

/** A detection by the lift trigger over lift window `k`: its score is the lift, its threshold that window's trigger. */
function liftDetection(state: SurgeState, lf: typeof liftScratch, k: number, start: number, seasonal: boolean): SurgeDetection {
  return detectionOf(state, { trigger: 'lift', filled: lf.filled[k], sum: lf.sum[k], expected: lf.expected[k], score: lf.lift[k], threshold: state.liftTriggers[k] }, start, seasonal);
}

/** Lift windows' figures of the bucket being scored (module scratch, like `scratch`). */
const liftScratch = { n: 0, sum: new Float64Array(4), expected: new Float64Array(4), lift: new Float64Array(4), filled: new Float64Array(4), othersSum: new Float64Array(4) };

/** Posts, expected posts and lift (pseudo-counts added) of each lift window, newest bucket included. */
function liftFigures(state: SurgeState): typeof liftScratch {
  const lf = liftScratch;
  const kw = state.params.windowPseudoCount;
  const cap = state.ringCount.length;
  const windows = state.liftWindows;
  lf.n = windows.length;
  for (let k = 0; k < windows.length; k++) {
    const filled = Math.min(windows[k], state.ringFilled);
    let sum = 0;
    let exp = 0;
    let max = 0;
    let second = 0;
    for (let i = 0; i < filled; i++) {
      const idx = (state.ringPos - 1 - i + cap) % cap;
      const c = state.ringCount[idx];
      sum += c;
      exp += state.ringExpected[idx];
      if (c > max) [second, max] = [max, c];
      else if (c > second) second = c;
    }
    lf.filled[k] = filled;
    lf.sum[k] = sum;
    lf.expected[k] = exp;
    // The busiest bucket counts as the second busiest: one bucket's spike is not a surge.
    const trimmed = filled > 1 ? sum - max + second : sum;
    lf.lift[k] = (trimmed + kw) / (exp + kw);
    lf.othersSum[k] = sum - state.ringCount[(state.ringPos - 1 + cap) % cap];
  }
  return lf;
}

/**
 * The series' own bar per scale: each day's (288 buckets') maximum score is kept for `barDays`
 * days; the bar is the `barRank`-th highest of them plus `barMargin`, floored at `threshold`. An
 * ordinary day beats the rank-th highest of n with probability rank / (n + 1); the margin makes a
 * merely record-tying day not enough.
 */
function trackBars(state: SurgeState, score: Float64Array, nScales: number): void {
  const p = state.params;
  for (let k = 0; k < nScales; k++) if (score[k] > state.dayMax[k]) state.dayMax[k] = score[k];
  if (++state.dayBuckets < state.bucketsPerDay) return;
  const d = p.barDays;
  const slot = state.days % d;
  for (let k = 0; k < nScales; k++) {
    state.dailyMax[k * d + slot] = state.dayMax[k];
    state.dayMax[k] = -Infinity;
  }
  state.days++;
  state.dayBuckets = 0;
  if (p.barRank <= 0 || state.days < MIN_BAR_DAYS) return;
  const have = Math.min(state.days, d);
  // The k-th largest of the last days' maxima: a new ordinary day beats it with probability
  // k / (days + 1); with k ≥ 2, one surge day in the history does not raise the bar by itself.
  const rank = Math.min(p.barRank, have);
  for (let k = 0; k < nScales; k++) {
    const v = Array.from(state.dailyMax.subarray(k * d, k * d + have)).sort((x, y) => y - x);
    state.bars[k] = Math.max(p.threshold, v[Math.min(rank, have) - 1] + p.barMargin);
  }
}

/** Smallest count that fires this bucket at some scale, given the rest of each window (Infinity if none can). */
function upperBound(state: SurgeState, s: typeof scratch, nScales: number): number {
  const p = state.params;
  const kw = p.windowPseudoCount;
  let best = Infinity;
  for (let k = 0; k < nScales; k++) {
    const base = s.trimmedExpected[k] + kw;
    const neededTrimmed = Math.max(base * Math.exp(state.bars[k] * state.scales[k]), base * p.minLift, p.minCount + kw) - kw;
    const filled = s.filled[k];
    let x: number;
    if (filled <= 1 || p.trimBuckets === 0) x = neededTrimmed - s.othersSum[k];
    else {
      // The busiest bucket counts as the second busiest. With the other buckets' sum os, top om
      // and second o2, the window's sum is os − om + o2 + x for x ≤ o2, os − om + 2x up to om, and
      // os + om (constant) beyond: solve where it reaches what the bar needs.
      const os = s.othersSum[k];
      const om = s.othersMax[k];
      const o2 = Math.max(s.othersSecond[k], 0);
      if (neededTrimmed <= os - om + 2 * o2) x = neededTrimmed - (os - om + o2);
      else if (neededTrimmed <= os + om) x = (neededTrimmed - os + om) / 2;
      else continue;
    }
    best = Math.min(best, Math.max(x, 0));
  }
  const lf = liftScratch;
  for (let k = 0; k < lf.n; k++) {
    const lift = Math.max(state.liftTriggers[k], Math.exp(p.liftMinScore * state.liftScales[k]));
    const needed = Math.max(lift * (lf.expected[k] + kw) - kw, p.minCount);
    best = Math.min(best, Math.max(needed - lf.othersSum[k], 0));
  }
  return best;
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

/**
 * The log offset of a seasonal slot: the hour of the day's (learnt on weekdays), plus on a weekend
 * day the weekend's shift (a whole weekend is quieter, its daily shape is the weekdays' one).
 */
function offsetOf(state: SurgeState, slot: number): number {
  return state.seasonalOffset[slot % SLOTS_PER_DAY] + (slot >= SLOTS_PER_DAY ? state.weekendShift : 0);
}

function recordHour(state: SurgeState): void {
  const p = state.params;
  if (state.hourSlot >= SLOTS_PER_DAY) {
    const ring = state.weekendResiduals;
    ring[state.weekendHours % ring.length] = state.hourResidual / state.hourBuckets - state.seasonalOffset[state.hourSlot - SLOTS_PER_DAY];
    state.weekendHours++;
    if (state.weekendHours >= WEEKEND_MIN_HOURS) state.weekendShift = median(ring, 0, Math.min(state.weekendHours, ring.length));
    return;
  }
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
