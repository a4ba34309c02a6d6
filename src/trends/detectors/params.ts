/**
 * Default parameters of the three trend detectors.
 *
 * One global set for every subreddit: no per-series tuning. Surge was tuned on real labelled series
 * (`bench/detectors/tune.js`, leave-one-file-out checked), velocity and rising on synthetic series
 * with labelled bursts (`bench/detectors/quality.js`); the README gives the reasoning behind each number.
 */

/**
 * Parameters of `trends.surge` (posts per bucket far above the subreddit's norm). Tuned on real
 * labelled mention counts (see README.md, "Surge on real data"): a log-scale model with a robust
 * scale, an hour-of-day baseline, a minimum lift and one alert per episode.
 */
export interface SurgeParams {
  /** Bucket width. Five minutes: fast enough to call a surge within minutes, wide enough that busy subreddits have tens of posts per bucket. */
  readonly bucketMs: number;
  /** Half-life of the level (EWMA of ln(count + bucketPseudoCount) net of the hour-of-day offset). 3.5 days: the daily shape is the offsets' job, and a day-long surge must not become the norm. */
  readonly levelHalfLifeBuckets: number;
  /** Half-life of the robust scales (EWMA of |log residual|). One week: each subreddit's burstiness, learnt slowly enough that one surge does not raise the bar much. */
  readonly scaleHalfLifeBuckets: number;
  /** Days of hourly log residuals kept per hour-of-day slot; the offset is their median, so a one-off day is ignored while a daily rhythm is learnt. */
  readonly seasonalDays: number;
  /** A slot's offset is used only after this many full hours of that slot were recorded. */
  readonly seasonalMinDays: number;
  /** Posts added to each bucket's count before taking logs (ln 0 is undefined; quiet buckets are not infinitely below normal). */
  readonly bucketPseudoCount: number;
  /** Posts added to the window's observed and expected sums before their ratio: a quiet subreddit's 0 → 3 posts is not a huge lift. */
  readonly windowPseudoCount: number;
  /** Minimum posts in the window to fire at all. */
  readonly minCount: number;
  /** Minimum (window posts + windowPseudoCount) / (expected + windowPseudoCount) to fire, a lift in plain terms as well as a score. */
  readonly minLift: number;
  /** Floor of the bar a scale's score must reach (score = ln(lift) / the subreddit's own robust scale of ln(lift) at that time scale). */
  readonly threshold: number;
  /** Buckets of the long window. Three hours: lifts of a few times that build over hours. */
  readonly windowBuckets: number;
  /** Buckets of the short window (0: the long window alone). Fifteen minutes: a short, intense burst. */
  readonly shortWindowBuckets: number;
  /** Busiest buckets left out of each window's sum (0 or 1): with 1, a single-bucket spike is never a surge. */
  readonly trimBuckets: number;
  /** The series' own bar per time scale: the barRank-th highest of its last `barDays` daily score maxima (floored at `threshold`); 0 = the fixed `threshold` alone. */
  readonly barRank: number;
  /** Days of daily score maxima the bar is taken from. */
  readonly barDays: number;
  /** Added to that daily maximum (score units): an ordinary day must beat the history clearly, not just tie it. */
  readonly barMargin: number;
  /**
   * The lift trigger: fire when the posts of the last `liftWindowBuckets` reach this many times
   * (the short window's: `liftShortTrigger` times) the seasonal expectation ((posts + windowPseudoCount) / (expected +
   * windowPseudoCount)), with at least `minCount` posts, whatever the subreddit's learnt
   * burstiness; 0 turns it off (the learnt bars alone).
   */
  readonly liftTrigger: number;
  /** The lift trigger on the short window too: the lift its posts must reach there (0: the long lift window alone). */
  readonly liftShortTrigger: number;
  /** Buckets of the lift trigger's window. */
  readonly liftWindowBuckets: number;
  /** The lift trigger also needs ln(lift) ≥ this × the window's robust scale of ln lift (a series whose every hour swings 5× is not surging at 5×). */
  readonly liftMinScore: number;
  /** An episode lasts while some lift window's lift is at least this (or some score is over its bar). */
  readonly episodeEndLift: number;
  /** Within an episode, a later event only when some lift window's lift reaches this many times the highest lift reported (0: never). */
  readonly regrowFactor: number;
  /** Buckets after a detection during which the subreddit cannot fire again (after it, the score must also drop below the threshold once). */
  readonly cooldownBuckets: number;
  /** Buckets observed before any detection (level and scale need history). */
  readonly warmupBuckets: number;
  /** Log residuals beyond clipZ × scale update the level and the scales as if they were at that bound, so a surge does not inflate its own baseline. */
  readonly clipZ: number;
  /** A gap longer than this many buckets resets level and scales (not the hour-of-day offsets) and re-enters warm-up, instead of replaying millions of zeros. */
  readonly maxGapBuckets: number;
}

/** Parameters of `trends.velocity` (a keyword's share of posts spikes). */
export interface VelocityParams {
  /** Bucket width. Thirty minutes: a busy subreddit has hundreds of posts per bucket so a keyword can reach the minimum count, and a trend is still reported within the half-hour. */
  readonly bucketMs: number;
  /** Half-life of each keyword's baseline share, in non-empty buckets. One day: smooths the daily mix of topics. */
  readonly baselineHalfLifeBuckets: number;
  /** Floor of the baseline share: an unseen or rare keyword is treated as if it were in this share of posts. */
  readonly priorShare: number;
  /** Variance inflation over the binomial (real keyword counts are overdispersed); divides the deviance. */
  readonly dispersion: number;
  /** Minimum posts containing the keyword in the bucket. */
  readonly minCount: number;
  /** Minimum share / baseline share: a common word moving 20% on a huge bucket is not a spike. */
  readonly minRatio: number;
  /** Signed square root of the binomial deviance (≈ z-score, well calibrated at small counts) to reach. */
  readonly threshold: number;
  /** Buckets after a keyword fires during which that keyword cannot fire again; after it, the keyword fires again only once its episode has ended (a bucket in which it was not hot). */
  readonly cooldownBuckets: number;
  /** A count above expected + clipZ·√(expected·dispersion) (and above minCount) updates the baseline as if it were at that bound, so a burst does not raise its own baseline. */
  readonly clipZ: number;
  /** Non-empty buckets observed before any detection. */
  readonly warmupBuckets: number;
  /** Posts observed before any detection (a quiet subreddit needs enough text to know its vocabulary). */
  readonly warmupPosts: number;
  /** Most keywords remembered per subreddit; the lowest-weight ones are evicted beyond this. */
  readonly maxKeywords: number;
  /** Post ids and permalinks carried as evidence per detection. */
  readonly maxEvidence: number;
}

/**
 * Parameters of `trends.velocity` on posts (stories.ts): a keyword carried by many distinct authors
 * within the window, far beyond its own history. Chosen on real r/wallstreetbets posts with planted
 * stories and floods, leaving one period out (bench/detectors/stories.js).
 */
export interface StoryParams {
  /** Evaluation step: posts are fed and keywords judged once per step (the pipeline closes a step after it ends plus the lateness). */
  readonly bucketMs: number;
  /** The sliding window the evidence is counted in. */
  readonly windowMs: number;
  /** Distinct authors (unknown authors weighted) a keyword needs in the window to fire. */
  readonly minAuthors: number;
  /**
   * Characters of a post's body that count besides its title (0: the title alone). Stories show in
   * titles; long bodies (press releases, due diligence) put dozens of words in each post, and a few
   * such posts made most false alarms on real posts.
   */
  readonly bodyChars: number;
  /** What one distinct title of an unknown (`[deleted]`) author counts for: less than a known author, since nobody can tell who wrote it. */
  readonly unknownAuthorWeight: number;
  /**
   * A title of an unknown author that shares at least this share of its keywords (Jaccard) and at
   * least duplicateTitleMinShared keywords with a title of an unknown author in the window is that
   * title's source: the reworded reposts of one deleted account (`$AMRS The real reason Bill and
   * Melinda split up…` five times in 20 minutes) count once. 0 turns it off.
   */
  readonly duplicateTitleShare: number;
  readonly duplicateTitleMinShared: number;
  /** Floor of a keyword's history share: a new name or ticker is expected in this share of sources. */
  readonly priorShare: number;
  /** Half-life of each keyword's history share. */
  readonly historyHalfLifeMs: number;
  /** Negative-binomial excess φ: a keyword expected λ times is scored with variance λ(1 + φλ), so an everyday word needs far more than a new one. */
  readonly excessDispersion: number;
  /** Minimum evidence / expected. */
  readonly minRatio: number;
  /** Signed root of the Poisson deviance over (1 + φλ) to reach (≈ z-score). */
  readonly threshold: number;
  /** A keyword that fired (or joined a story) cannot start a story again for this long. */
  readonly cooldownMs: number;
  /** A story absorbs later keywords of the same sources for this long. */
  readonly storyMs: number;
  /** Two keywords are one story when they share at least this share of their sources. */
  readonly storyOverlap: number;
  /** A keyword rising in a story's posts joins its event when it has this many authors, this score and this share of the story's sources. */
  readonly companionMinAuthors: number;
  readonly companionScore: number;
  readonly companionShare: number;
  /** History needed before any detection: this long since the first post and this many sources gone through the window. */
  readonly warmupMs: number;
  readonly warmupSources: number;
  /** Most keyword histories remembered per subreddit. */
  readonly maxKeywords: number;
  /** Post ids and permalinks carried as evidence per detection. */
  readonly maxEvidence: number;
}

/** Parameters of `trends.rising` (a young post gaining score and comments unusually fast). */
export interface RisingParams {
  /** Posts older than this are neither scored nor remembered. */
  readonly maxAgeMs: number;
  /** Minimum time between the two observations a rate is computed from; closer re-reads are ignored (the older anchor is kept). */
  readonly minGapMs: number;
  /** Weight of one comment relative to one point of score in the growth rate. */
  readonly commentWeight: number;
  /** Offset (per hour) added before taking logs, so zero growth has a finite log. */
  readonly logOffsetPerHour: number;
  /** Step (natural-log units) of the streaming quantile estimates that form the norm; larger adapts faster, jitters more. */
  readonly normStep: number;
  /** Only rates of posts younger than this feed the norm: young posts are where growth happens, and old ones would fill it with zeros. */
  readonly normMaxAgeMs: number;
  /** Upper quantile of log growth defining the norm's spread (spread = q_upper − median). */
  readonly normUpperQuantile: number;
  /** Floor of the spread, in natural-log units (a subreddit where every post grows alike still needs a real jump). */
  readonly minLogSpread: number;
  /** Fire when (log growth − median) / spread reaches this. */
  readonly threshold: number;
  /** Growth / typical (median) growth to fire, a second guard in plain terms. */
  readonly minRatio: number;
  /** Minimum absolute growth (score + commentWeight · comments) per hour. */
  readonly minGrowthPerHour: number;
  /** Rate samples needed before the norm is trusted (the first ones seed the quantiles exactly). */
  readonly warmupSamples: number;
  /** Most posts tracked (and most fired ids remembered) per subreddit. */
  readonly maxTrackedPosts: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const DEFAULT_SURGE_PARAMS: Readonly<SurgeParams> = Object.freeze({
  bucketMs: 5 * MINUTE,
  levelHalfLifeBuckets: 1008,
  scaleHalfLifeBuckets: 2016,
  seasonalDays: 7,
  seasonalMinDays: 2,
  bucketPseudoCount: 1,
  windowPseudoCount: 5,
  minCount: 5,
  minLift: 2,
  threshold: 4,
  windowBuckets: 36,
  shortWindowBuckets: 3,
  trimBuckets: 0,
  barRank: 3,
  barDays: 14,
  barMargin: 1,
  liftTrigger: 6,
  liftWindowBuckets: 9,
  liftMinScore: 5,
  liftShortTrigger: 6,
  episodeEndLift: 1.5,
  regrowFactor: 3,
  cooldownBuckets: 288,
  warmupBuckets: 72,
  clipZ: 2,
  maxGapBuckets: 2016,
});

export const DEFAULT_VELOCITY_PARAMS: Readonly<VelocityParams> = Object.freeze({
  bucketMs: 30 * MINUTE,
  baselineHalfLifeBuckets: 48,
  priorShare: 0.002,
  dispersion: 1.5,
  minCount: 5,
  minRatio: 3,
  threshold: 6,
  cooldownBuckets: 12,
  clipZ: 3,
  warmupBuckets: 12,
  warmupPosts: 200,
  maxKeywords: 5000,
  maxEvidence: 10,
});

export const DEFAULT_STORY_PARAMS: Readonly<StoryParams> = Object.freeze({
  bucketMs: 2 * MINUTE,
  windowMs: HOUR,
  minAuthors: 5,
  bodyChars: 0,
  unknownAuthorWeight: 0.5,
  duplicateTitleShare: 0.8,
  duplicateTitleMinShared: 3,
  priorShare: 0.0005,
  historyHalfLifeMs: 72 * HOUR,
  excessDispersion: 1,
  minRatio: 4,
  threshold: 5,
  cooldownMs: 24 * HOUR,
  storyMs: 6 * HOUR,
  storyOverlap: 0.34,
  companionMinAuthors: 3,
  companionScore: 2,
  companionShare: 0.25,
  warmupMs: 24 * HOUR,
  warmupSources: 500,
  maxKeywords: 20_000,
  maxEvidence: 10,
});

export const DEFAULT_RISING_PARAMS: Readonly<RisingParams> = Object.freeze({
  maxAgeMs: 12 * HOUR,
  minGapMs: 10 * MINUTE,
  commentWeight: 2,
  logOffsetPerHour: 1,
  normStep: 0.02,
  normMaxAgeMs: 3 * HOUR,
  normUpperQuantile: 0.9,
  minLogSpread: 0.5,
  threshold: 3.5,
  minRatio: 5,
  minGrowthPerHour: 20,
  warmupSamples: 100,
  maxTrackedPosts: 20_000,
});

function check(ok: boolean, name: string, rule: string): void {
  if (!ok) throw new RangeError(`detector parameter ${name} must be ${rule}`);
}

function positive(p: object, names: string[]): void {
  for (const n of names) {
    const v = (p as Record<string, unknown>)[n];
    check(typeof v === 'number' && Number.isFinite(v) && v > 0, n, 'a finite number > 0');
  }
}

function nonNegative(p: object, names: string[]): void {
  for (const n of names) {
    const v = (p as Record<string, unknown>)[n];
    check(typeof v === 'number' && Number.isFinite(v) && v >= 0, n, 'a finite number ≥ 0');
  }
}

function integers(p: object, names: string[]): void {
  for (const n of names) check(Number.isInteger((p as Record<string, unknown>)[n]), n, 'an integer');
}

/** Defaults overlaid with `overrides`, validated (throws RangeError naming the bad parameter). */
export function resolveSurgeParams(overrides: Partial<SurgeParams> = {}): Readonly<SurgeParams> {
  const p = { ...DEFAULT_SURGE_PARAMS, ...stripUndefined(overrides) };
  positive(p, [
    'bucketMs',
    'levelHalfLifeBuckets',
    'scaleHalfLifeBuckets',
    'seasonalDays',
    'seasonalMinDays',
    'bucketPseudoCount',
    'windowPseudoCount',
    'threshold',
    'windowBuckets',
    'barDays',
    'clipZ',
    'maxGapBuckets',
  ]);
  nonNegative(p, ['liftTrigger', 'liftWindowBuckets', 'liftMinScore', 'liftShortTrigger', 'episodeEndLift', 'regrowFactor', 'minCount', 'minLift', 'cooldownBuckets', 'warmupBuckets', 'shortWindowBuckets', 'trimBuckets', 'barRank', 'barMargin']);
  integers(p, ['bucketMs', 'windowBuckets', 'liftWindowBuckets', 'shortWindowBuckets', 'trimBuckets', 'barRank', 'barDays', 'cooldownBuckets', 'warmupBuckets', 'maxGapBuckets', 'seasonalDays', 'seasonalMinDays']);
  check(p.shortWindowBuckets < p.windowBuckets, 'shortWindowBuckets', '< windowBuckets');
  check(p.trimBuckets <= 1, 'trimBuckets', '0 or 1');
  check(p.liftWindowBuckets <= 288, 'liftWindowBuckets', '≤ 288');
  check(p.regrowFactor === 0 || p.regrowFactor > 1, 'regrowFactor', '0 or > 1');
  check(p.barRank <= p.barDays, 'barRank', '≤ barDays');
  check(p.barDays <= 60, 'barDays', '≤ 60');
  check(p.seasonalMinDays <= p.seasonalDays, 'seasonalMinDays', '≤ seasonalDays');
  check(p.seasonalDays <= 28, 'seasonalDays', '≤ 28');
  // Hour-of-day slots need buckets that tile an hour.
  check(p.bucketMs <= HOUR && HOUR % p.bucketMs === 0, 'bucketMs', 'a divisor of one hour');
  return Object.freeze(p);
}

export function resolveVelocityParams(overrides: Partial<VelocityParams> = {}): Readonly<VelocityParams> {
  const p = { ...DEFAULT_VELOCITY_PARAMS, ...stripUndefined(overrides) };
  positive(p, ['bucketMs', 'baselineHalfLifeBuckets', 'priorShare', 'dispersion', 'threshold', 'maxKeywords', 'clipZ']);
  nonNegative(p, ['minCount', 'minRatio', 'cooldownBuckets', 'warmupBuckets', 'warmupPosts', 'maxEvidence']);
  integers(p, ['bucketMs', 'cooldownBuckets', 'warmupBuckets', 'maxKeywords', 'maxEvidence']);
  check(p.priorShare < 1, 'priorShare', '< 1');
  return Object.freeze(p);
}

export function resolveStoryParams(overrides: Partial<StoryParams> = {}): Readonly<StoryParams> {
  const p = { ...DEFAULT_STORY_PARAMS, ...stripUndefined(overrides) };
  positive(p, ['bucketMs', 'windowMs', 'minAuthors', 'priorShare', 'historyHalfLifeMs', 'threshold', 'storyOverlap', 'maxKeywords']);
  nonNegative(p, ['bodyChars', 'unknownAuthorWeight', 'excessDispersion', 'minRatio', 'cooldownMs', 'storyMs', 'companionMinAuthors', 'companionScore', 'companionShare', 'warmupMs', 'warmupSources', 'maxEvidence', 'duplicateTitleShare', 'duplicateTitleMinShared']);
  integers(p, ['bucketMs', 'windowMs', 'bodyChars', 'maxKeywords', 'maxEvidence', 'duplicateTitleMinShared']);
  check(p.duplicateTitleShare <= 1, 'duplicateTitleShare', '≤ 1');
  check(p.priorShare < 1, 'priorShare', '< 1');
  check(p.storyOverlap <= 1 && p.companionShare <= 1, 'storyOverlap', 'and companionShare ≤ 1');
  check(p.windowMs >= p.bucketMs, 'windowMs', '≥ bucketMs');
  return Object.freeze(p);
}

export function resolveRisingParams(overrides: Partial<RisingParams> = {}): Readonly<RisingParams> {
  const p = { ...DEFAULT_RISING_PARAMS, ...stripUndefined(overrides) };
  positive(p, [
    'maxAgeMs',
    'minGapMs',
    'logOffsetPerHour',
    'normStep',
    'normMaxAgeMs',
    'normUpperQuantile',
    'minLogSpread',
    'threshold',
    'maxTrackedPosts',
  ]);
  nonNegative(p, ['commentWeight', 'minRatio', 'minGrowthPerHour', 'warmupSamples']);
  integers(p, ['maxTrackedPosts', 'warmupSamples']);
  check(p.normUpperQuantile > 0.5 && p.normUpperQuantile < 1, 'normUpperQuantile', 'in (0.5, 1)');
  return Object.freeze(p);
}

/** `{ threshold: undefined }` must not erase a default. */
function stripUndefined<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

/** Per-step EWMA weight that halves an observation's influence after `halfLife` steps. */
export function alphaFromHalfLife(halfLife: number): number {
  return 1 - Math.pow(0.5, 1 / halfLife);
}
