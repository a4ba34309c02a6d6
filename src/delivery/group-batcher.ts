interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

export interface GroupBatcherOptions {
  /** Most items per call of `run` (default 256). */
  maxBatch?: number;
  /**
   * When a batch is cut. `'turn'` (default): one setImmediate after the first push, so it takes
   * everything pushed until the event loop has polled for I/O once more. `'microtasks'`: a
   * process.nextTick after the first push, which runs once the microtasks queued meanwhile (and
   * those they queue) have run: the batch takes what the current callback and its promise chains
   * push, without waiting for a turn of the loop. For a `run` that answers without I/O of its own
   * (synchronous SQLite), where a turn of the loop is only a delay.
   */
  flush?: 'turn' | 'microtasks';
  /**
   * Hold a batch smaller than `enough()` items for up to `maxWaitMs` after it would have run, so
   * that items about to arrive join it; it runs as soon as it has `enough()` (asked at each push).
   */
  gather?: { enough: () => number; maxWaitMs: number };
}

/**
 * Group commit for the worker's hot-path writes and checks. Items pushed in the same event-loop
 * turn are handled by one call of `run` (one transaction, one round trip); items pushed while
 * that call is in flight wait for the next one. Idle, an item waits one setImmediate (or only for
 * the microtasks, see `flush`); under load
 * the database sees one statement per batch instead of one per delivery.
 *
 * `run` gets the items in push order and answers one result per item, in the same order. When it
 * throws, every item of that batch is rejected (the next batch still runs).
 */
export class GroupBatcher<T, R> {
  private queue: Pending<T, R>[] = [];
  private running = false;
  private scheduled = false;
  private readonly maxBatch: number;
  private readonly schedule: (fn: () => void) => void;
  private readonly gather?: GroupBatcherOptions['gather'];
  private holdTimer?: NodeJS.Timeout;

  constructor(
    private readonly run: (items: T[]) => Promise<R[]> | R[],
    options: GroupBatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 256;
    this.schedule = options.flush === 'microtasks' ? process.nextTick : setImmediate;
    this.gather = options.gather;
  }

  push(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.holdTimer !== undefined) {
        if (this.queue.length < this.gather!.enough()) return;
        clearTimeout(this.holdTimer);
        this.holdTimer = undefined;
      }
      if (!this.running && !this.scheduled) {
        this.scheduled = true;
        this.schedule(() => {
          this.scheduled = false;
          if (this.gather && !this.running && this.queue.length > 0 && this.queue.length < this.gather.enough()) {
            this.holdTimer = setTimeout(() => {
              this.holdTimer = undefined;
              void this.flush();
            }, this.gather.maxWaitMs);
            return;
          }
          void this.flush();
        });
      }
    });
  }

  /** Items waiting for a batch (not counting the one in flight). */
  get waiting(): number {
    return this.queue.length;
  }

  private async flush(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      // What arrived during a run has already waited a round trip: it goes next, at once.
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const results = await this.run(batch.map((p) => p.item));
          if (results.length !== batch.length) throw new Error(`batch of ${batch.length} answered ${results.length} results`);
          batch.forEach((p, i) => p.resolve(results[i]));
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.running = false;
    }
  }
}
