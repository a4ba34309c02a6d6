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
import { knownAuthor, postSource } from './sources';
import { postKeywords, scanSpans, spanHash } from './tokenizer';

export interface VelocityPost {
  readonly id: string;
  readonly title: string;
  readonly selftext?: string;
  readonly permalink?: string;
  /** Reddit author; absent, `[deleted]` or `[removed]` when unknown (then the title stands in, see sources.ts). */
  readonly author?: string;
  /** The post's `postSource` key when the caller has it already (the pipeline computes it once for both detectors). */
  readonly source?: string;
  /** Creation time (ms since epoch): where the post sits in the story detector's window (stories.ts). */
  readonly createdAtMs?: number;
}

/**
 * Two keywords that fired are one story when at least this share of the larger one's sources also
 * carry the other (`josh` and `brown` in the same posts); a keyword whose story is already running
 * (fired in an earlier bucket, still in its episode) joins it instead of firing again.
 */
export const STORY_OVERLAP = 0.5;

/**
 * A keyword that rose in the same posts as one that fired (score at least this, count and ratio at
 * their minimums) is reported as part of that story, and starts its own cooldown with it.
 */
export const STORY_MIN_SCORE = 3;

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
  /** Start and (independent) posts of the last non-empty bucket folded in: the first half of a two-bucket window. */
  prevStart: number | null;
  prevPosts: number;
  /** That bucket's posts and their sources (observeVelocityPosts only), for the evidence of a two-bucket window. */
  prevBucket: { posts: readonly VelocityPost[]; sources: readonly string[] } | null;
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
    prevStart: null,
    prevPosts: 0,
    prevBucket: null,
  };
}

/**
 * Feed all posts of one bucket (created in [bucketStart, bucketStart + bucketMs)); returns one
 * detection per story, highest score first. A bucket at or before the last one fed is ignored, so
 * replays are harmless; an empty bucket changes nothing. Duplicate post ids count once.
 *
 * Counting is per source, not per post (sources.ts): a known author counts a keyword once in a
 * bucket however often they post it, and so do reposts of one title by unknown authors; `count` and
 * `posts` are such independent posts. Keywords that fired in the same posts are one detection
 * (`keyword` the highest-scoring, `keywords` all of them); a keyword whose posts are mostly those of
 * a story still running from an earlier bucket is part of it and fires nothing.
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
  const sourceOf: number[] = [];
  const sources = new Map<string, number>();
  for (const post of posts) {
    if (counter.seenPost(post.id)) continue;
    const key = post.source ?? postSource(post);
    let si = sources.get(key);
    if (si === undefined) sources.set(key, (si = sources.size));
    sourceOf.push(si);
    kept.push(post);
  }
  // The counter counts a keyword once per run of equal `post` marks: scan each source's posts together.
  const order = kept.map((_, i) => i).sort((a, b) => sourceOf[a] - sourceOf[b] || a - b);
  for (const i of order) {
    counter.post = sourceOf[i];
    scanSpans(kept[i].title, counter);
    if (kept[i].selftext) scanSpans(kept[i].selftext!, counter);
  }
  const pairWith = state.prevStart === start - state.params.bucketMs ? state.prevBucket : null;
  const elevated: Elevated[] = [];
  const fired = foldBucket(state, start, sources.size, counter.keys, counter.hashes, counter.counts, undefined, elevated);
  const sourceKeys = [...sources.keys()];
  state.prevBucket = { posts: kept, sources: sourceOf.map((i) => sourceKeys[i]) };
  if (fired.length === 0) return [];

  // Evidence and stories: re-scan only when something fired, so the common path keeps no per-post lists.
  // Posts of the bucket before come first: a two-bucket detection's evidence spans both.
  const N = state.observedBuckets - 1;
  const all: VelocityPost[] = [...(pairWith?.posts ?? []), ...kept];
  const allSources: string[] = [...(pairWith?.sources ?? []), ...sourceOf.map((i) => sourceKeys[i])];
  const firstOfThis = all.length - kept.length;
  const firedSet = new Set(fired.map((f) => f.keyword));
  const running: string[] = [];
  for (const [k, last] of state.episodes) if (last === N && !firedSet.has(k)) running.push(k);
  const postsOf = new Map<string, number[]>();
  for (const k of firedSet) postsOf.set(k, []);
  for (const k of running) postsOf.set(k, []);
  for (const e of elevated) postsOf.set(e.keyword, []);
  all.forEach((post, i) => {
    for (const k of postKeywords(post.title, post.selftext)) postsOf.get(k)?.push(i);
  });
  const twoBuckets = new Set<string>(elevated.filter((e) => e.twoBuckets).map((e) => e.keyword));
  for (const f of fired) if (f.bucketStart !== start) twoBuckets.add(f.keyword);
  // A keyword's posts in its window: both buckets for a two-bucket window, this bucket otherwise.
  const windowPosts = (k: string) => (twoBuckets.has(k) ? postsOf.get(k)! : postsOf.get(k)!.filter((i) => i >= firstOfThis));
  const sets = new Map<string, Set<string>>();
  for (const k of postsOf.keys()) sets.set(k, new Set(windowPosts(k).map((i) => allSources[i])));
  const shared = (a: string, b: string) => {
    const x = sets.get(a)!;
    const y = sets.get(b)!;
    let both = 0;
    for (const v of x) if (y.has(v)) both++;
    return { both, small: Math.min(x.size, y.size), large: Math.max(x.size, y.size) };
  };
  // In one story: most posts of the smaller keyword carry the larger one (`cohen` within `gme`'s posts).
  const sameStory = (a: string, b: string) => {
    const o = shared(a, b);
    return o.both > 0 && o.both >= STORY_OVERLAP * o.small;
  };
  // Part of a story already told: the two keywords mostly share their posts, both ways.
  const continues = (a: string, b: string) => {
    const o = shared(a, b);
    return o.both > 0 && o.both >= STORY_OVERLAP * o.large;
  };

  // `fired` is sorted by score: each keyword joins the first (highest-scoring) story it shares posts with.
  const stories: { lead: Fired; keywords: string[] }[] = [];
  for (const f of fired) {
    if (running.some((k) => continues(f.keyword, k))) continue;
    const story = stories.find((st) => st.keywords.some((k) => sameStory(f.keyword, k)));
    if (story) story.keywords.push(f.keyword);
    else stories.push({ lead: f, keywords: [f.keyword] });
  }
  // Keywords that rose with a story without firing on their own are part of it (and start no story of their own for a while).
  const joined: string[] = [];
  for (const e of elevated) {
    const story = stories.find((st) => st.keywords.some((k) => sameStory(e.keyword, k)));
    if (story) {
      story.keywords.push(e.keyword);
      joined.push(e.keyword);
    }
  }
  if (joined.length > 0) startEpisodes(state, start, N, joined);
  const max = state.params.maxEvidence;
  return stories.map(({ lead, keywords }) => {
    const mine = windowPosts(lead.keyword);
    const authors = new Set<string>();
    for (const i of mine) {
      const a = knownAuthor(all[i].author);
      if (a !== null) authors.add(a);
    }
    const sample = mine.slice(0, max).map((i) => all[i]);
    return {
      ...lead,
      keywords,
      distinctAuthors: authors.size,
      postIds: sample.map((p) => p.id),
      permalinks: sample.filter((p) => p.permalink).map((p) => p.permalink!),
    };
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
 * detections carry no post ids and no authors (`distinctAuthors` 0), one keyword each. `onScore` sees every counted keyword's score (backtests).
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
    keywords: [f.keyword],
    distinctAuthors: 0,
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

type Fired = Omit<VelocityDetection, 'keywords' | 'distinctAuthors' | 'postIds' | 'permalinks'>;

/** A keyword well above its usual share in this bucket without firing: it may belong to a story that fires. */
interface Elevated {
  keyword: string;
  twoBuckets: boolean;
}

function foldBucket(
  state: VelocityState,
  start: number,
  n: number,
  keys: readonly string[],
  hashes: readonly number[],
  counts: ArrayLike<number>,
  onScore: ((keyword: string, score: number) => void) | undefined,
  elevated?: Elevated[],
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
  // The previous bucket, when it is the one just before, makes a two-bucket window with this one.
  const pairPosts = state.prevStart === start - p.bucketMs ? state.prevPosts : 0;
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
    // A story that builds over an hour: this bucket and the one before, each with at least minCount.
    const prevC = pairPosts > 0 && slot >= 0 && table.updatedAt(slot) === N ? table.lastCount(slot) : 0;
    if (onScore !== undefined || (warm && (c >= p.minCount || episode !== undefined))) {
      const single = c > expected ? Math.sqrt(binomialDeviance(c, n, base) / dispersion) : 0;
      let score = single;
      let window = { start, c, n, share };
      if (prevC >= p.minCount && c >= p.minCount) {
        const c2 = c + prevC;
        const n2 = n + pairPosts;
        const pair = c2 > n2 * base ? Math.sqrt(binomialDeviance(c2, n2, base) / effectiveDispersion(state, n2 * base)) : 0;
        if (pair > single && c2 / n2 >= p.minRatio * base) {
          score = pair;
          window = { start: start - p.bucketMs, c: c2, n: n2, share: c2 / n2 };
        }
      }
      if (onScore) onScore(keyword, warm ? score : 0);
      hot = warm && window.share >= p.minRatio * base && score >= p.threshold;
      if (elevated && !hot && warm && c >= p.minCount && window.share >= p.minRatio * base && score >= STORY_MIN_SCORE) {
        elevated.push({ keyword, twoBuckets: window.start !== start });
      }
      // An episode goes on while the count stays above the robust bound (hysteresis: it need not stay hot).
      const sameEpisode = episode !== undefined && episode >= N - 1 && (hot || c > bound);
      if (sameEpisode) state.episodes.set(keyword, N);
      if (hot && !sameEpisode && c >= p.minCount && !(start < (state.cooldowns.get(keyword) ?? -Infinity))) {
        fired.push({
          kind: 'trends.velocity',
          keyword,
          bucketStart: window.start,
          bucketEnd: start + p.bucketMs,
          firstPostAt: window.start,
          count: window.c,
          posts: window.n,
          share: round6(window.share),
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
    if (s >= 0) table.set(s, next, N + 1, c);
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
  if (fired.length > 0) startEpisodes(state, start, N, fired.map((f) => f.keyword));
  state.observedBuckets = N + 1;
  state.observedPosts += n;
  state.prevStart = start;
  state.prevPosts = n;
  if (table.size > p.maxKeywords) table.prune(N + 1, keep);
  fired.sort((a, b) => b.score - a.score || (a.keyword < b.keyword ? -1 : a.keyword > b.keyword ? 1 : 0));
  return fired;
}

/** Cooldown and episode of keywords that fired (or joined a story that fired) in bucket `n` starting at `start`. */
function startEpisodes(state: VelocityState, start: number, n: number, keywords: readonly string[]): void {
  const until = start + (state.params.cooldownBuckets + 1) * state.params.bucketMs;
  for (const [k, t] of state.cooldowns) if (t <= start) state.cooldowns.delete(k);
  for (const keyword of keywords) {
    const k = copyString(keyword);
    state.cooldowns.set(k, until);
    state.episodes.set(k, n);
  }
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
