/**
 * `trends.velocity`: a keyword's SHARE of a subreddit's posts in a bucket far above its usual share.
 *
 * Shares, not counts, so a subreddit-wide surge (more posts of the usual mix) flags nothing. Each
 * keyword keeps an EWMA of its share; buckets where it is absent count as share 0, applied lazily
 * when the keyword is next seen, so a bucket costs O(distinct keywords in it), not O(vocabulary).
 */
import { alphaFromHalfLife, resolveVelocityParams, VelocityParams } from './params';
import { keywordOf, postKeywords, scanSpans, spanHash, SpanSink } from './tokenizer';

export { postKeywords, stem, tokenize } from './tokenizer';

export interface VelocityPost {
  readonly id: string;
  readonly title: string;
  readonly selftext?: string;
  readonly permalink?: string;
}

export interface VelocityDetection {
  readonly kind: 'trends.velocity';
  readonly keyword: string;
  readonly bucketStart: number;
  readonly bucketEnd: number;
  /** Posts in the bucket containing the keyword. */
  readonly count: number;
  /** Posts in the bucket. */
  readonly posts: number;
  /** count / posts. */
  readonly share: number;
  /** Share the score was measured against: the keyword's EWMA share, floored at `priorShare`. */
  readonly baselineShare: number;
  /** Signed root of the binomial deviance / dispersion (≈ z-score). */
  readonly score: number;
  readonly threshold: number;
  /** Fewest posts with the keyword that may fire (`params.minCount`). */
  readonly minCount: number;
  /** Up to `maxEvidence` ids of posts containing the keyword, in input order. */
  readonly postIds: readonly string[];
  readonly permalinks: readonly string[];
}

export interface VelocityState {
  readonly params: Readonly<VelocityParams>;
  readonly alpha: number;
  /** Remembered keywords: at most `params.maxKeywords` after every call. */
  readonly keywords: KeywordTable;
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
 * Keyword → (EWMA share, bucket of last update), struct-of-arrays: slots in typed arrays plus an
 * open-addressing index keyed by the keyword's FNV-1a hash (which the scanner already computed),
 * so a lookup neither hashes the string again nor allocates, and the GC has almost nothing to trace.
 *
 * Admission: while below 80% of the cap every keyword is admitted. Above it, a keyword seen in one
 * post only is admitted on its second sighting (a 1-bit "doorkeeper" filter remembers first
 * sightings), so the long tail of one-off words does not churn the table, while a rare word that
 * keeps coming back still gets a baseline. Beyond the cap, the lowest-weight keywords are evicted.
 */
export class KeywordTable {
  private slotKeys: (string | undefined)[] = [];
  private slotHashes = new Int32Array(16);
  private shares = new Float64Array(16);
  private updated = new Int32Array(16);
  private readonly free: number[] = [];
  /** slot + 1 per position, 0 = empty; linear probing; rebuilt (no tombstones) after evictions. */
  private index = new Int32Array(32);
  private live = 0;
  private doorkeeper: Uint32Array | null = null;
  private doorkeeperAdds = 0;

  constructor(readonly cap: number) {}

  get size(): number {
    return this.live;
  }

  has(keyword: string): boolean {
    return this.slot(keyword, spanHash(keyword)) >= 0;
  }

  /** Slot of `keyword` (whose spanHash is `hash`), or -1. */
  slot(keyword: string, hash: number): number {
    const h = hash | 0;
    const mask = this.index.length - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const e = this.index[i];
      if (e === 0) return -1;
      const s = e - 1;
      if (this.slotHashes[s] === h && this.slotKeys[s] === keyword) return s;
    }
  }

  share(slot: number): number {
    return this.shares[slot];
  }

  updatedAt(slot: number): number {
    return this.updated[slot];
  }

  set(slot: number, share: number, updatedAt: number): void {
    this.shares[slot] = share;
    this.updated[slot] = updatedAt;
  }

  /** Decide admission of an unknown keyword seen in `count` posts; returns its new slot or -1. */
  admit(keyword: string, hash: number, count: number): number {
    if (this.live >= Math.floor(this.cap * 0.8) && count < 2 && !this.secondSighting(hash)) return -1;
    let slot = this.free.pop();
    if (slot === undefined) {
      slot = this.slotKeys.length;
      if (slot >= this.shares.length) this.growSlots();
      this.slotKeys.push(undefined);
    }
    this.slotKeys[slot] = copyString(keyword);
    this.slotHashes[slot] = hash | 0;
    this.live++;
    if (this.live * 2 > this.index.length) this.rebuildIndex(this.index.length * 2);
    else this.insertIndex(slot);
    return slot;
  }

  /** Keywords and their current decayed weights, in slot order (for tests and diagnostics). */
  *entries(now: number, keep: number): IterableIterator<[string, number]> {
    for (let s = 0; s < this.slotKeys.length; s++) {
      const k = this.slotKeys[s];
      if (k !== undefined) yield [k, this.shares[s] * Math.pow(keep, now - this.updated[s])];
    }
  }

  /** Evict the lowest current weights down to 80% of the cap (ties: lowest slot first). */
  prune(now: number, keep: number): void {
    const target = Math.floor(this.cap * 0.8);
    const excess = this.live - target;
    if (excess <= 0) return;
    const n = this.slotKeys.length;
    const weights = new Float64Array(n);
    const live: number[] = [];
    for (let s = 0; s < n; s++) {
      if (this.slotKeys[s] === undefined) continue;
      weights[s] = this.shares[s] * Math.pow(keep, now - this.updated[s]);
      live.push(s);
    }
    const scratch = new Float64Array(live.length);
    for (let i = 0; i < live.length; i++) scratch[i] = weights[live[i]];
    const cut = kthSmallest(scratch, excess - 1);
    let below = 0;
    for (const s of live) if (weights[s] < cut) below++;
    let ties = excess - below;
    for (const s of live) {
      const w = weights[s];
      if (w < cut || (w === cut && ties-- > 0)) {
        this.slotKeys[s] = undefined;
        this.free.push(s);
        this.live--;
      }
    }
    this.rebuildIndex(this.index.length);
  }

  private insertIndex(slot: number): void {
    const mask = this.index.length - 1;
    let i = this.slotHashes[slot] & mask;
    while (this.index[i] !== 0) i = (i + 1) & mask;
    this.index[i] = slot + 1;
  }

  private rebuildIndex(size: number): void {
    this.index = new Int32Array(size);
    for (let s = 0; s < this.slotKeys.length; s++) if (this.slotKeys[s] !== undefined) this.insertIndex(s);
  }

  private growSlots(): void {
    const size = this.shares.length * 2;
    const hashes = new Int32Array(size);
    hashes.set(this.slotHashes);
    const shares = new Float64Array(size);
    shares.set(this.shares);
    const updated = new Int32Array(size);
    updated.set(this.updated);
    this.slotHashes = hashes;
    this.shares = shares;
    this.updated = updated;
  }

  /** True if seen before (since the filter's last reset); records the sighting either way. */
  private secondSighting(hash: number): boolean {
    // 32 Kbit, two probes; reset after `cap` first sightings so stale sightings fade out.
    if (this.doorkeeper === null || this.doorkeeperAdds >= this.cap) {
      this.doorkeeper = new Uint32Array(1024);
      this.doorkeeperAdds = 0;
    }
    const a = hash & 0x7fff;
    const b = (hash >>> 15) & 0x7fff;
    const bits = this.doorkeeper;
    const seen = (bits[a >>> 5] & (1 << (a & 31))) !== 0 && (bits[b >>> 5] & (1 << (b & 31))) !== 0;
    if (!seen) {
      bits[a >>> 5] |= 1 << (a & 31);
      bits[b >>> 5] |= 1 << (b & 31);
      this.doorkeeperAdds++;
    }
    return seen;
  }
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
  const counter = COUNTER;
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

/**
 * Counts, per keyword, the posts of one bucket containing it (each post at most once).
 *
 * Hot path: fed spans of the lower-cased text with their hash, it looks raw tokens up in its own
 * open-addressing table, comparing characters in place, so a token seen before in the bucket (most
 * occurrences, Zipf) costs no string copy, no V8 string hashing and no stopword or stemming work:
 * those run once per distinct raw token per bucket.
 */
class BucketCounter implements SpanSink {
  /** Entries live while their stamp equals `generation`: reset() is O(1), no reallocation. */
  private generation = 1;
  private readonly raw = new SpanTable();
  private readonly kw = new SpanTable();
  private readonly ids = new SpanTable();
  readonly keys: string[] = [];
  readonly hashes: number[] = [];
  readonly counts: number[] = [];
  private readonly lastPost: number[] = [];
  post = 0;

  /** Forget the previous bucket (the instance is reused: one per process, calls are synchronous). */
  reset(): void {
    this.generation = this.generation === 0x7ffffffe ? 1 : this.generation + 1;
    this.raw.reset(this.generation);
    this.kw.reset(this.generation);
    this.ids.reset(this.generation);
    this.keys.length = 0;
    this.hashes.length = 0;
    this.counts.length = 0;
    this.lastPost.length = 0;
    this.post = 0;
  }

  /** Whether a post id was already seen in this bucket (then its post is skipped); records it. */
  seenPost(id: string): boolean {
    const h = spanHash(id);
    if (this.ids.find(id, 0, id.length, h) !== NOT_FOUND) return true;
    this.ids.insert(id, h, 0);
    return false;
  }

  span(s: string, start: number, end: number, hash: number): void {
    let id = this.raw.find(s, start, end, hash);
    if (id === NOT_FOUND) {
      const rawToken = s.slice(start, end);
      id = this.resolve(rawToken, hash);
      this.raw.insert(rawToken, hash, id);
    }
    if (id >= 0 && this.lastPost[id] !== this.post) {
      this.lastPost[id] = this.post;
      this.counts[id]++;
    }
  }

  /** Keyword index of a raw token, -1 for a stopword. */
  private resolve(rawToken: string, rawHash: number): number {
    const k = keywordOf(rawToken, rawHash);
    if (k === null) return -1;
    const h = k === rawToken ? rawHash : spanHash(k);
    let i = this.kw.find(k, 0, k.length, h);
    if (i === NOT_FOUND) {
      i = this.keys.length;
      this.kw.insert(k, h, i);
      this.keys.push(k);
      this.hashes.push(h);
      this.counts.push(0);
      this.lastPost.push(-1);
    }
    return i;
  }
}

const NOT_FOUND = -2;

/**
 * Open-addressing string → int table keyed by precomputed FNV hashes, matching spans of another
 * string in place (no copy, no V8 string hashing). Entries live while their stamp equals the
 * current generation, so clearing is O(1).
 */
class SpanTable {
  private mask = 1023;
  private keys: string[] = new Array<string>(1024).fill('');
  private hashes = new Int32Array(1024);
  private values = new Int32Array(1024);
  private stamps = new Int32Array(1024);
  private generation = 1;
  private used = 0;

  reset(generation: number): void {
    if (this.mask > 65535) this.allocate(1024); // do not keep a huge table after one giant bucket
    else if (generation === 1) this.stamps.fill(0); // the generation counter wrapped around
    this.generation = generation;
    this.used = 0;
  }

  find(s: string, start: number, end: number, hash: number): number {
    const h = hash | 0;
    const len = end - start;
    for (let i = h & this.mask; ; i = (i + 1) & this.mask) {
      if (this.stamps[i] !== this.generation) return NOT_FOUND;
      if (this.hashes[i] === h) {
        const k = this.keys[i];
        if (k.length === len && sameChars(k, s, start)) return this.values[i];
      }
    }
  }

  insert(key: string, hash: number, value: number): void {
    const h = hash | 0;
    let i = h & this.mask;
    while (this.stamps[i] === this.generation) i = (i + 1) & this.mask;
    this.keys[i] = key;
    this.hashes[i] = h;
    this.values[i] = value;
    this.stamps[i] = this.generation;
    if (++this.used * 2 > this.mask) this.grow();
  }

  private allocate(size: number): void {
    this.mask = size - 1;
    this.keys = new Array<string>(size).fill('');
    this.hashes = new Int32Array(size);
    this.values = new Int32Array(size);
    this.stamps = new Int32Array(size);
  }

  private grow(): void {
    const { keys, hashes, values, stamps, generation } = this;
    this.allocate((this.mask + 1) * 2);
    this.used = 0;
    for (let j = 0; j < keys.length; j++) if (stamps[j] === generation) this.insert(keys[j], hashes[j], values[j]);
  }
}

/** Keywords expected in at least this many posts feed the learnt dispersion. */
const DISPERSION_MIN_EXPECTED = 5;
/** Buckets of evidence before the learnt dispersion is used. */
const DISPERSION_MIN_BUCKETS = 12;
/** The learnt dispersion's half-life is this many times the baseline's (slower: a stable property). */
const DISPERSION_HALF_LIFE_FACTOR = 4;

/** Shared by every call: observeVelocityPosts is synchronous and resets it first. */
const COUNTER = new BucketCounter();

function sameChars(k: string, s: string, start: number): boolean {
  for (let j = 0; j < k.length; j++) if (k.charCodeAt(j) !== s.charCodeAt(start + j)) return false;
  return true;
}

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

/** Hoare quickselect (middle pivot, deterministic): the k-th smallest value (0-based); reorders `a`. */
function kthSmallest(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
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

/**
 * Slices of the lower-cased post text can be V8 "sliced strings" that pin the whole text in
 * memory; concatenating then slicing stores only the keyword itself in the long-lived table.
 */
function copyString(s: string): string {
  return (' ' + s).slice(1);
}

function round4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
