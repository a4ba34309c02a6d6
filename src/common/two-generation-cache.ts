/**
 * A bounded memo for values that are cheap to rebuild but worth keeping while in use: two maps,
 * the current generation and the one before it. A hit in the older one is carried over; when the
 * current one reaches `max` entries it becomes the older one and the one before is dropped whole.
 * At most 2 × `max` entries, about the recently used ones (not exactly the most recent `max`,
 * as in an LRU). Made for a hot path that sees more distinct keys than the bound (a fan-out to
 * 50,000 webhooks, each seen once): there an LRU's bookkeeping on every miss and eviction cost
 * more than the value saved, while a miss here is two map lookups and one insert.
 */
export class TwoGenerationCache<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();

  constructor(private readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new Error('max must be a positive integer');
  }

  get(key: K): V | undefined {
    const v = this.current.get(key);
    if (v !== undefined) return v;
    const old = this.previous.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  set(key: K, value: V): void {
    if (this.current.size >= this.max && !this.current.has(key)) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(key, value);
  }

  /** Entries held (both generations; a key carried over may be counted twice). */
  get size(): number {
    return this.current.size + this.previous.size;
  }
}
