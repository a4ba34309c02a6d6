interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

export interface GroupBatcherOptions {
  /** Most items per call of `run` (default 256). */
  maxBatch?: number;
}

/**
 * Group commit for the worker's hot-path writes and checks. Items pushed in the same event-loop
 * turn are handled by one call of `run` (one transaction, one round trip); items pushed while
 * that call is in flight wait for the next one. Idle, an item waits one setImmediate; under load
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

  constructor(
    private readonly run: (items: T[]) => Promise<R[]> | R[],
    options: GroupBatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 256;
  }

  push(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running && !this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
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
