/**
 * `trends.rising`: a post younger than `maxAgeMs` gaining score and comments much faster than the
 * subreddit's usual post.
 *
 * The poller re-reads recent posts; each re-read at least `minGapMs` after the previous one gives a
 * growth rate (score + commentWeight · comments per hour). The subreddit's norm is a robust EWMA of
 * log rates (log because rates are heavy-tailed: most posts gain nothing, a few gain thousands).
 * Memory is bounded: posts are forgotten once older than `maxAgeMs`, and both tables are capped.
 */
import type { RisingDetection } from '../../events/kinds/rising';
import { resolveRisingParams, RisingParams } from './params';

export interface RisingObservation {
  readonly postId: string;
  readonly createdUtcMs: number;
  readonly observedAtMs: number;
  readonly score: number;
  readonly numComments: number;
  readonly permalink: string;
  readonly title: string;
}

interface TrackedPost {
  createdUtcMs: number;
  observedAtMs: number;
  score: number;
  numComments: number;
}

export interface RisingState {
  readonly params: Readonly<RisingParams>;
  /** Last anchor observation per post. */
  readonly posts: Map<string, TrackedPost>;
  /** Posts that already fired → their creation time (to forget them once too old to fire anyway). */
  readonly fired: Map<string, number>;
  /**
   * Insertion order of `posts` / `fired`, oldest first. V8 Maps degrade badly when used as FIFO
   * queues (deleted slots at the front are rescanned by every iterator), so order lives here.
   */
  readonly postQueue: FifoQueue;
  readonly firedQueue: FifoQueue;
  /** Streaming estimates of the median and upper quantile of ln(growth + offset). */
  logMedian: number;
  logUpper: number;
  samples: number;
  /** The first `warmupSamples` log rates, kept only to seed the quantiles exactly; then emptied. */
  seed: number[];
  /** Latest observedAtMs seen: "now" for forgetting old posts. */
  watermark: number;
  /** Watermark at which the next forgetting sweep runs (sweeps are throttled, the age check is not). */
  nextForgetAt: number;
}

export function createRisingState(params: Partial<RisingParams> = {}): RisingState {
  const p = resolveRisingParams(params);
  return {
    params: p,
    posts: new Map(),
    fired: new Map(),
    postQueue: new FifoQueue(),
    firedQueue: new FifoQueue(),
    logMedian: 0,
    logUpper: 0,
    samples: 0,
    seed: [],
    watermark: -Infinity,
    nextForgetAt: -Infinity,
  };
}

const HOUR_MS = 3_600_000;
const FORGET_EVERY_MS = 60_000;

/**
 * Feed one observation of one post. Returns a detection at most once per post. An observation not
 * newer than the post's anchor is ignored (replays are harmless); one closer than `minGapMs` keeps
 * the older anchor so rates are measured over a meaningful span.
 */
export function observeRising(state: RisingState, obs: RisingObservation): RisingDetection | null {
  if (
    !Number.isFinite(obs.createdUtcMs) ||
    !Number.isFinite(obs.observedAtMs) ||
    !Number.isFinite(obs.score) ||
    !Number.isFinite(obs.numComments)
  ) {
    throw new RangeError('createdUtcMs, observedAtMs, score and numComments must be finite numbers');
  }
  const p = state.params;
  if (obs.observedAtMs > state.watermark) state.watermark = obs.observedAtMs;
  if (state.watermark >= state.nextForgetAt) {
    state.nextForgetAt = state.watermark + FORGET_EVERY_MS;
    forgetOld(state);
  }
  const age = obs.observedAtMs - obs.createdUtcMs;
  if (age > p.maxAgeMs || obs.createdUtcMs < state.watermark - p.maxAgeMs) {
    state.posts.delete(obs.postId);
    return null;
  }
  if (state.fired.has(obs.postId)) return null;

  const prev = state.posts.get(obs.postId);
  if (!prev) {
    const key = copyString(obs.postId);
    state.posts.set(key, {
      createdUtcMs: obs.createdUtcMs,
      observedAtMs: obs.observedAtMs,
      score: obs.score,
      numComments: obs.numComments,
    });
    state.postQueue.push(key, obs.createdUtcMs, state.posts, p.maxTrackedPosts);
    // Cap: drop the oldest-inserted posts (roughly the oldest posts).
    while (state.posts.size > p.maxTrackedPosts) state.postQueue.evictFrom(state.posts);
    return null;
  }
  const gap = obs.observedAtMs - prev.observedAtMs;
  if (gap < p.minGapMs) return null;

  const sinceMs = prev.observedAtMs;
  const hours = gap / HOUR_MS;
  const scorePerHour = (obs.score - prev.score) / hours;
  const commentsPerHour = (obs.numComments - prev.numComments) / hours;
  const growth = scorePerHour + p.commentWeight * commentsPerHour;
  prev.observedAtMs = obs.observedAtMs;
  prev.score = obs.score;
  prev.numComments = obs.numComments;

  const x = Math.log(Math.max(growth, 0) + p.logOffsetPerHour);
  const warm = state.samples >= p.warmupSamples;
  const spread = Math.max(state.logUpper - state.logMedian, p.minLogSpread);
  const z = (x - state.logMedian) / spread;
  const typical = Math.exp(state.logMedian);
  if (age <= p.normMaxAgeMs) updateNorm(state, x);

  if (
    !warm ||
    z < p.threshold ||
    growth < p.minGrowthPerHour ||
    growth + p.logOffsetPerHour < p.minRatio * typical
  ) {
    return null;
  }
  state.posts.delete(obs.postId);
  const key = copyString(obs.postId);
  state.fired.set(key, obs.createdUtcMs);
  state.firedQueue.push(key, obs.createdUtcMs, state.fired, p.maxTrackedPosts);
  while (state.fired.size > p.maxTrackedPosts) state.firedQueue.evictFrom(state.fired);
  return {
    kind: 'trends.rising',
    postId: obs.postId,
    permalink: obs.permalink,
    title: obs.title,
    createdUtcMs: obs.createdUtcMs,
    ageMinutes: Math.round(Math.max(0, age) / 60_000),
    scorePerHour: round2(scorePerHour),
    commentsPerHour: round2(commentsPerHour),
    growthPerHour: round2(growth),
    baselinePerHour: round2(Math.max(0, typical - p.logOffsetPerHour)),
    zScore: round4(z),
    threshold: p.threshold,
    score: obs.score,
    numComments: obs.numComments,
    sinceMs,
    observedAt: obs.observedAtMs,
  };
}

/**
 * Norm = streaming median and upper quantile of log growth (stochastic approximation: each sample
 * nudges a quantile up by step·q or down by step·(1 − q)). Quantiles, not mean/variance: growth is
 * zero-inflated and heavy-tailed, where a variance is dominated by the few viral posts we want to find.
 */
function updateNorm(state: RisingState, x: number): void {
  const p = state.params;
  state.samples++;
  if (state.samples <= p.warmupSamples) {
    state.seed.push(x);
    if (state.samples === p.warmupSamples) {
      const sorted = [...state.seed].sort((a, b) => a - b);
      state.logMedian = quantileOf(sorted, 0.5);
      state.logUpper = quantileOf(sorted, p.normUpperQuantile);
      state.seed = [];
    }
    return;
  }
  const step = p.normStep;
  state.logMedian += x > state.logMedian ? step * 0.5 : x < state.logMedian ? -step * 0.5 : 0;
  const q = p.normUpperQuantile;
  state.logUpper += x > state.logUpper ? step * q : x < state.logUpper ? -step * (1 - q) : 0;
}

function quantileOf(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/** Drop posts (and fired ids) too old to matter, oldest-inserted first: amortised O(1). */
function forgetOld(state: RisingState): void {
  const cutoff = state.watermark - state.params.maxAgeMs;
  state.postQueue.evictOlderThan(cutoff, state.posts);
  state.firedQueue.evictOlderThan(cutoff, state.fired);
}

/**
 * Ids in insertion order with their creation times. An id may be stale (its map entry already
 * deleted, e.g. a post that fired); eviction then just skips it. The array is compacted once half
 * of it is consumed, and stale ids are filtered out if it ever exceeds twice the cap.
 */
export class FifoQueue {
  private ids: string[] = [];
  private created: number[] = [];
  private head = 0;

  get length(): number {
    return this.ids.length - this.head;
  }

  push(id: string, createdUtcMs: number, map: Map<string, unknown>, cap: number): void {
    this.ids.push(id);
    this.created.push(createdUtcMs);
    if (this.length > 2 * cap + 1024) {
      const keepIds: string[] = [];
      const keepCreated: number[] = [];
      for (let i = this.head; i < this.ids.length; i++) {
        if (map.has(this.ids[i]) || i === this.ids.length - 1) {
          keepIds.push(this.ids[i]);
          keepCreated.push(this.created[i]);
        }
      }
      this.ids = keepIds;
      this.created = keepCreated;
      this.head = 0;
    }
  }

  /** Remove the oldest-inserted id that is still in `map` from `map` (and everything stale before it). */
  evictFrom(map: Map<string, unknown>): void {
    while (this.head < this.ids.length) {
      const id = this.ids[this.head++];
      if (map.delete(id)) break;
    }
    this.compact();
  }

  /** Pop ids from the front while they were created before `cutoff`, deleting them from `map`. */
  evictOlderThan(cutoff: number, map: Map<string, unknown>): void {
    while (this.head < this.ids.length && this.created[this.head] < cutoff) map.delete(this.ids[this.head++]);
    this.compact();
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.ids.length) {
      this.ids = this.ids.slice(this.head);
      this.created = this.created.slice(this.head);
      this.head = 0;
    }
  }
}

/** See velocity.ts: keep map keys from pinning the caller's larger strings. */
function copyString(s: string): string {
  return (' ' + s).slice(1);
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

function round4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}
