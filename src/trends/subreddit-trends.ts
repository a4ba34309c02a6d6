import type { Detection } from '../events/catalogue';
import {
  createRisingState,
  createSurgeState,
  createVelocityState,
  observeRising,
  observeSurgeBucket,
  observeVelocityPosts,
  RisingParams,
  RisingState,
  SurgeParams,
  SurgeState,
  VelocityParams,
  VelocityPost,
  VelocityState,
} from './detectors';

/** What the pipeline knows of a post at one observation. */
export interface ObservedPost {
  id: string;
  createdAtMs: number;
  title: string;
  selftext: string;
  permalink: string;
  score: number;
  numComments: number;
}

export interface TrendParams {
  surge?: Partial<SurgeParams>;
  velocity?: Partial<VelocityParams>;
  rising?: Partial<RisingParams>;
  /** How long after a bucket ends posts created in it may still arrive (Reddit's listing lag). */
  latenessMs?: number;
}

export const DEFAULT_LATENESS_MS = 2 * 60_000;

/**
 * Event-time buckets: posts go into the bucket of their creation time; a bucket is closed (handed
 * to its detector, in order, with empty buckets in between) once the watermark is past its end
 * plus the allowed lateness. A post for an already closed bucket is late and dropped (counted).
 * Memory is the open buckets only.
 */
export class BucketWindow<T> {
  private readonly open = new Map<number, T[]>();
  /** Start of the next bucket to close; null before the first post. */
  private nextToClose: number | null = null;
  late = 0;

  constructor(
    readonly bucketMs: number,
    readonly latenessMs: number,
  ) {}

  add(createdAtMs: number, item: T): boolean {
    const start = createdAtMs - (((createdAtMs % this.bucketMs) + this.bucketMs) % this.bucketMs);
    if (this.nextToClose === null) this.nextToClose = start;
    if (start < this.nextToClose) {
      this.late++;
      return false;
    }
    let items = this.open.get(start);
    if (!items) this.open.set(start, (items = []));
    items.push(item);
    return true;
  }

  /** Closes every bucket that ended at least `latenessMs` before `watermarkMs`, oldest first, gaps included. */
  *advance(watermarkMs: number): Generator<{ bucketStart: number; items: T[] }> {
    while (this.nextToClose !== null && this.nextToClose + this.bucketMs + this.latenessMs <= watermarkMs) {
      const start: number = this.nextToClose;
      const items = this.open.get(start) ?? [];
      this.open.delete(start);
      this.nextToClose = start + this.bucketMs;
      yield { bucketStart: start, items };
    }
  }
}

/**
 * All detector state of one subreddit: surge over post counts, velocity over the posts' words (both
 * by event-time bucket), rising over repeated observations of the same posts.
 */
export class SubredditTrends {
  private readonly surge: SurgeState;
  private readonly velocity: VelocityState;
  private readonly rising: RisingState;
  private readonly surgeWindow: BucketWindow<string>;
  private readonly velocityWindow: BucketWindow<VelocityPost>;
  /** Highest creation time seen: the event-time watermark. */
  private maxCreatedAtMs = -Infinity;

  constructor(
    readonly subreddit: string,
    params: TrendParams = {},
  ) {
    this.surge = createSurgeState(params.surge);
    this.velocity = createVelocityState(params.velocity);
    this.rising = createRisingState(params.rising);
    const lateness = params.latenessMs ?? DEFAULT_LATENESS_MS;
    this.surgeWindow = new BucketWindow(this.surge.params.bucketMs, lateness);
    this.velocityWindow = new BucketWindow(this.velocity.params.bucketMs, lateness);
  }

  /**
   * Feeds one observation of some posts: the ones seen for the first time count towards surge and
   * velocity; every one is a growth sample for rising. Returns rising detections at once; bucket
   * detectors fire from `advance`.
   */
  observe(posts: readonly ObservedPost[], newIds: ReadonlySet<string>, observedAtMs: number): Detection[] {
    const out: Detection[] = [];
    for (const p of posts) {
      if (newIds.has(p.id)) {
        this.surgeWindow.add(p.createdAtMs, p.id);
        this.velocityWindow.add(p.createdAtMs, { id: p.id, title: p.title, selftext: p.selftext, permalink: p.permalink });
        if (p.createdAtMs > this.maxCreatedAtMs) this.maxCreatedAtMs = p.createdAtMs;
      }
      const r = observeRising(this.rising, {
        postId: p.id,
        createdUtcMs: p.createdAtMs,
        observedAtMs,
        score: p.score,
        numComments: p.numComments,
        permalink: p.permalink,
        title: p.title,
      });
      if (r) out.push(r);
    }
    return out;
  }

  /**
   * Closes the buckets the watermark has passed and runs the bucket detectors over them. The
   * watermark is the newest post's creation time (replays of files) or, for a live poller,
   * the poll time — a quiet subreddit's buckets must close too.
   */
  advance(watermarkMs?: number): Detection[] {
    const wm = watermarkMs ?? this.maxCreatedAtMs;
    const out: Detection[] = [];
    for (const b of this.surgeWindow.advance(wm)) {
      const d = observeSurgeBucket(this.surge, b.bucketStart, b.items.length);
      if (d) out.push(d);
    }
    for (const b of this.velocityWindow.advance(wm)) {
      if (b.items.length > 0) out.push(...observeVelocityPosts(this.velocity, b.bucketStart, b.items));
    }
    return out;
  }

  get latePosts(): number {
    return this.surgeWindow.late;
  }
}
