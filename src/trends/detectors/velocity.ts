/**
 * `trends.velocity`: a keyword's SHARE of a subreddit's posts in a bucket far above its usual share.
 *
 * Shares, not counts, so a subreddit-wide surge (more posts of the usual mix) flags nothing. Each
 * keyword keeps an EWMA of its share; buckets where it is absent count as share 0, applied lazily
 * when the keyword is next seen, so a bucket costs O(distinct keywords in it), not O(vocabulary).
 */
import type { VelocityDetection } from '../../events/kinds/velocity';
import { alphaFromHalfLife, resolveVelocityParams, VelocityParams } from './params';
import { BucketCounter, copyString, KeywordTable } from './hash-tables';
import { postKeywords, scanSpans, spanHash } from './tokenizer';

export { postKeywords, stem, tokenize } from './tokenizer';

export interface VelocityPost {
  readonly id: string;
  readonly title: string;
  readonly selftext?: string;
  readonly permalink?: string;
}

export interface VelocityState {
  readonly params: Readonly<VelocityParams>;
  readonly alpha: number;
  /** Remembered keywords: at most `params.maxKeywords` after every call. */
  readonly keywords: KeywordTable;
  /**
   * Scratch for counting one bucket's keywords, owned by this state rather than shared by the
   * process, so no two detectors ever write into the same tables.
   */
  readonly counter: BucketCounter;
  /** Keyword → first bucket start at which it may fire again (only keywords that fired recently). */
  readonly cooldowns: Map<string, number>;
  /**
   * Keyword → the last non-empty bucket (index, `observedBuckets` clock) of its episode, for keywords
   * that fired and are still in it. An episode goes on while the keyword is hot (share ≥ minRatio ×
   * baseline and score ≥ threshold) or at least above the robust bound, in consecutive buckets: one
   * event, however long it lasts.
   */
  readonly episodes: Map<string, number>;
  /**
   * Learnt negative-binomial excess φ of this subreddit's keyword counts (variance ≈ λ + φ·λ²: the
   * relative noise of a busy keyword does not shrink the way the binomial says): bias-corrected EWMA
   * (half-life 4 × the baseline's) of ((c − λ)² − λ(1 − share)) / λ² over keywords expected in ≥ 5
   * posts (where zero counts are rare, so skipping absent keywords does not bias it), after warm-up,
   * with c clipped at the robust bound and hot buckets and running episodes left out (so a burst does
   * not teach the detector that bursts are normal). Once 12 buckets have fed it, a keyword expected
   * in λ posts is scored with dispersion max(params.dispersion, 1 + φ·λ).
   */
  learntExcess: number;
  /** The EWMA behind learntExcess (started at 0; learntExcess is it bias-corrected). */
  excessSum: number;
  /** Buckets that fed learntExcess. */
  dispersionBuckets: number;
  /** Non-empty buckets folded in: the clock of the lazy decay. */
  observedBuckets: number;
  observedPosts: number;
  lastBucketStart: number | null;
}

export function createVelocityState(params: Partial<VelocityParams> = {}): VelocityState {
  const p = resolveVelocityParams(params);
  return {
    params: p,
    alpha: alphaFromHalfLife(p.baselineHalfLifeBuckets),
    keywords: new KeywordTable(p.maxKeywords),
    counter: new BucketCounter(),
    cooldowns: new Map(),
    episodes: new Map(),
    learntExcess: 0,
    excessSum: 0,
    dispersionBuckets: 0,
    observedBuckets: 0,
    observedPosts: 0,
    lastBucketStart: null,
  };
}

/**
 * Feed all posts of one bucket (created in [bucketStart, bucketStart + bucketMs)); returns the
 * keywords that fired, highest score first. A bucket at or before the last one fed is ignored, so
 * replays are harmless; an empty bucket changes nothing. Duplicate post ids count once.
 */
export function observeVelocityPosts(
  state: VelocityState,
  bucketStartMs: number,
  posts: readonly VelocityPost[],
): VelocityDetection[] {
  const start = alignedStart(state, bucketStartMs);
  if (start === null) return [];
  const counter = state.counter;
  counter.reset();
  const kept: VelocityPost[] = [];
  for (const post of posts) {
    if (counter.seenPost(post.id)) continue;
    counter.post = kept.length;
    scanSpans(post.title, counter);
    if (post.selftext) scanSpans(post.selftext, counter);
    kept.push(post);
  }
  const fired = foldBucket(state, start, kept.length, counter.keys, counter.hashes, counter.counts, undefined);
  if (fired.length === 0) return [];

  // Evidence: re-scan only when something fired, so the common path keeps no per-post lists.
  const max = state.params.maxEvidence;
  const evidence = new Map<string, { ids: string[]; links: string[] }>();
  for (const f of fired) evidence.set(f.keyword, { ids: [], links: [] });
  for (const post of kept) {
    for (const k of postKeywords(post.title, post.selftext)) {
      const e = evidence.get(k);
      if (!e) continue;
      if (e.ids.length < max) e.ids.push(post.id);
      if (post.permalink && e.links.length < max) e.links.push(post.permalink);
    }
  }
  return fired.map((f) => {
    const e = evidence.get(f.keyword)!;
    return { ...f, postIds: e.ids, permalinks: e.links };
  });
}

/** Keywords expected in at least this many posts feed the learnt dispersion. */
const DISPERSION_MIN_EXPECTED = 5;
/** Buckets of evidence before the learnt dispersion is used. */
const DISPERSION_MIN_BUCKETS = 12;
/** The learnt dispersion's half-life is this many times the baseline's (slower: a stable property). */
const DISPERSION_HALF_LIFE_FACTOR = 4;

/**
 * Lower-level entry: feed a bucket as already-counted keywords (`counts`: posts containing each
 * keyword, `totalPosts`: posts in the bucket). Same scoring and state as observeVelocityPosts;
 * detections carry no post ids. `onScore` sees every counted keyword's score (backtests).
 */
export function observeVelocityCounts(
  state: VelocityState,
  bucketStartMs: number,
  totalPosts: number,
  counts: ReadonlyMap<string, number>,
  onScore?: (keyword: string, score: number) => void,
): VelocityDetection[] {
  if (!Number.isInteger(totalPosts) || totalPosts < 0) throw new RangeError('totalPosts must be an integer ≥ 0');
  for (const [k, c] of counts) {
    if (!Number.isInteger(c) || c < 0 || c > totalPosts) throw new RangeError(`count of "${k}" must be an integer in [0, totalPosts]`);
  }
  const start = alignedStart(state, bucketStartMs);
  if (start === null) return [];
  const keys = [...counts.keys()];
  return foldBucket(state, start, totalPosts, keys, keys.map(spanHash), [...counts.values()], onScore).map((f) => ({
    ...f,
    postIds: [],
    permalinks: [],
  }));
}

/**
 * The baseline share `keyword` would be scored against in the next bucket (its decayed EWMA,
 * bias-corrected, floored at priorShare) and whether the state is past warm-up. For plots.
 */
export function velocityBaseline(state: VelocityState, keyword: string, posts: number): { baseShare: number; warm: boolean; dispersion: number } {
  const p = state.params;
  const N = state.observedBuckets;
  const keep = 1 - state.alpha;
  const correction = N > 0 ? 1 - Math.pow(keep, N) : 1;
  const slot = state.keywords.slot(keyword, spanHash(keyword));
  const decayed = slot >= 0 ? state.keywords.share(slot) * Math.pow(keep, N - state.keywords.updatedAt(slot)) : 0;
  const baseShare = Math.max(N > 0 ? decayed / correction : 0, p.priorShare);
  return {
    baseShare,
    warm: N >= p.warmupBuckets && state.observedPosts >= p.warmupPosts,
    dispersion: effectiveDispersion(state, posts * baseShare),
  };
}

/** The dispersion a keyword expected in `expected` posts is scored with: the parameter, or 1 + φ·λ once φ is learnt and that is larger. */
function effectiveDispersion(state: VelocityState, expected: number): number {
  const p = state.params;
  return state.dispersionBuckets >= DISPERSION_MIN_BUCKETS ? Math.max(p.dispersion, 1 + Math.max(0, state.learntExcess) * expected) : p.dispersion;
}

function alignedStart(state: VelocityState, bucketStartMs: number): number | null {
  if (!Number.isFinite(bucketStartMs)) throw new RangeError('bucketStartMs must be a finite number');
  const b = state.params.bucketMs;
  const start = Math.floor(bucketStartMs / b) * b;
  if (state.lastBucketStart !== null && start <= state.lastBucketStart) return null;
  state.lastBucketStart = start;
  return start;
}

type Fired = Omit<VelocityDetection, 'postIds' | 'permalinks'>;

function foldBucket(
  state: VelocityState,
  start: number,
  n: number,
  keys: readonly string[],
  hashes: readonly number[],
  counts: ArrayLike<number>,
  onScore: ((keyword: string, score: number) => void) | undefined,
): Fired[] {
  if (n === 0) return [];
  const p = state.params;
  const N = state.observedBuckets;
  const keep = 1 - state.alpha;
  // EWMAs start at 0; dividing by (1 − keep^N) turns them into weighted means of the N buckets seen.
  const correction = N > 0 ? 1 - Math.pow(keep, N) : 1;
  const warm = N >= p.warmupBuckets && state.observedPosts >= p.warmupPosts;
  const fired: Fired[] = [];
  const table = state.keywords;
  let ratioSum = 0;
  let ratioN = 0;

  for (let i = 0; i < keys.length; i++) {
    const c = counts[i];
    if (c === 0) continue;
    const keyword = keys[i];
    const hash = hashes[i];
    const slot = table.slot(keyword, hash);
    const decayed = slot >= 0 ? table.share(slot) * Math.pow(keep, N - table.updatedAt(slot)) : 0;
    const share = c / n;

    const base = Math.max(N > 0 ? decayed / correction : 0, p.priorShare);
    const expected = n * base;
    const dispersion = effectiveDispersion(state, expected);
    const episode = state.episodes.size > 0 ? state.episodes.get(keyword) : undefined;
    // Robust update (below): a count the detector could fire on enters the baseline at most at
    // expected + clipZ·sd, so a burst does not raise its own baseline (and long bursts stay visible).
    const bound = warm ? Math.max(expected + p.clipZ * Math.sqrt(expected * dispersion), p.minCount) : n;
    let hot = false;
    if (onScore !== undefined || (warm && (c >= p.minCount || episode !== undefined))) {
      const score = c > expected ? Math.sqrt(binomialDeviance(c, n, base) / dispersion) : 0;
      if (onScore) onScore(keyword, warm ? score : 0);
      hot = warm && share >= p.minRatio * base && score >= p.threshold;
      // An episode goes on while the count stays above the robust bound (hysteresis: it need not stay hot).
      const sameEpisode = episode !== undefined && episode >= N - 1 && (hot || c > bound);
      if (sameEpisode) state.episodes.set(keyword, N);
      if (hot && !sameEpisode && c >= p.minCount && !(start < (state.cooldowns.get(keyword) ?? -Infinity))) {
        fired.push({
          kind: 'trends.velocity',
          keyword,
          bucketStart: start,
          bucketEnd: start + p.bucketMs,
          count: c,
          posts: n,
          share: round6(share),
          baselineShare: round6(base),
          score: round4(score),
          threshold: p.threshold,
          minCount: p.minCount,
        });
      }
    }

    // Bursts do not teach the detector that bursts are normal: hot buckets and episodes are left out.
    if (warm && expected >= DISPERSION_MIN_EXPECTED && !hot && episode === undefined) {
      const clipped = Math.min(c, bound);
      ratioSum += ((clipped - expected) * (clipped - expected) - expected * (1 - base)) / (expected * expected);
      ratioN++;
    }
    const next = decayed * keep + state.alpha * (c > bound ? bound / n : share);
    const s = slot >= 0 ? slot : table.admit(keyword, hash, c);
    if (s >= 0) table.set(s, next, N + 1);
  }
  if (ratioN > 0) {
    // EWMA from 0, bias-corrected like the shares: a weighted mean of the buckets seen, not of the first.
    const keepD = 1 - state.alpha / DISPERSION_HALF_LIFE_FACTOR;
    state.excessSum = state.excessSum * keepD + (1 - keepD) * (ratioSum / ratioN);
    state.dispersionBuckets++;
    state.learntExcess = state.excessSum / (1 - Math.pow(keepD, state.dispersionBuckets));
  }
  // An episode ends with the first non-empty bucket in which its keyword was not hot.
  if (state.episodes.size > 0) for (const [k, last] of state.episodes) if (last < N) state.episodes.delete(k);
  if (fired.length > 0) {
    const until = start + (p.cooldownBuckets + 1) * p.bucketMs;
    for (const [k, t] of state.cooldowns) if (t <= start) state.cooldowns.delete(k);
    for (const f of fired) {
      const k = copyString(f.keyword);
      state.cooldowns.set(k, until);
      state.episodes.set(k, N);
    }
  }
  state.observedBuckets = N + 1;
  state.observedPosts += n;
  if (table.size > p.maxKeywords) table.prune(N + 1, keep);
  fired.sort((a, b) => b.score - a.score || (a.keyword < b.keyword ? -1 : a.keyword > b.keyword ? 1 : 0));
  return fired;
}

/**
 * 2·[c·ln(c/λ) + (n−c)·ln((n−c)/(n−λ))], λ = n·p: the binomial log-likelihood ratio of the observed
 * share against p. Its signed root is close to a z-score but stays calibrated at the small counts
 * keywords live at, where (c − λ)/√λ wildly overstates significance.
 */
export function binomialDeviance(c: number, n: number, p: number): number {
  const lambda = n * p;
  let d = c > 0 ? c * Math.log(c / lambda) : 0;
  if (n > c) d += (n - c) * Math.log((n - c) / (n - lambda));
  return Math.max(0, 2 * d);
}

function round4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
