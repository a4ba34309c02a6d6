/**
 * The velocity detector's hand-rolled hash tables, keyed by the FNV-1a hashes the tokenizer already
 * computed: the long-lived keyword table of a detector state, and the per-bucket counter with its
 * span tables. They allocate nothing per lookup, which is what keeps the detector's hot path fast;
 * the scoring that uses them stays in velocity.ts.
 */
import { keywordOf, spanHash, SpanSink } from './tokenizer';

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
  /** Posts (sources) containing the keyword in the bucket of its last update. */
  private lastCounts = new Int32Array(16);
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

  lastCount(slot: number): number {
    return this.lastCounts[slot];
  }

  set(slot: number, share: number, updatedAt: number, lastCount = 0): void {
    this.shares[slot] = share;
    this.updated[slot] = updatedAt;
    this.lastCounts[slot] = lastCount;
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
    const lastCounts = new Int32Array(size);
    lastCounts.set(this.lastCounts);
    this.slotHashes = hashes;
    this.shares = shares;
    this.updated = updated;
    this.lastCounts = lastCounts;
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
 * Counts, per keyword, the posts of one bucket containing it (each post at most once).
 *
 * Hot path: fed spans of the lower-cased text with their hash, it looks raw tokens up in its own
 * open-addressing table, comparing characters in place, so a token seen before in the bucket (most
 * occurrences, Zipf) costs no string copy, no V8 string hashing and no stopword or stemming work:
 * those run once per distinct raw token per bucket.
 */
export class BucketCounter implements SpanSink {
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

  /** Forget the previous bucket: a detector state reuses its one counter for every bucket. */
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

function sameChars(k: string, s: string, start: number): boolean {
  for (let j = 0; j < k.length; j++) if (k.charCodeAt(j) !== s.charCodeAt(start + j)) return false;
  return true;
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
 * Slices of the lower-cased post text can be V8 "sliced strings" that pin the whole text in
 * memory; concatenating then slicing stores only the keyword itself in the long-lived table.
 */
export function copyString(s: string): string {
  return (' ' + s).slice(1);
}
