import type { Detection, SurgeDetection } from '../events/catalogue';
import {
  bucketStartOf,
  createRisingState,
  createSurgeState,
  createStoryState,
  forgetSurgeSource,
  observeRising,
  observeStoryPosts,
  observeSurgeBucket,
  observeSurgeGap,
  RisingParams,
  RisingState,
  StoryParams,
  StoryState,
  SurgeParams,
  SurgeState,
  VelocityPost,
} from './detectors';
import { knownAuthor, postSource } from './detectors/sources';

/** What the pipeline knows of a post at one observation. */
export interface ObservedPost {
  id: string;
  createdAtMs: number;
  /** As Reddit gives it; `[deleted]` (or absent) when unknown. */
  author?: string;
  title: string;
  selftext: string;
  permalink: string;
  score: number;
  numComments: number;
}

export interface TrendParams {
  surge?: Partial<SurgeParams>;
  /** `trends.velocity` on posts: the story detector (detectors/stories.ts). */
  velocity?: Partial<StoryParams>;
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
    const start = bucketStartOf(createdAtMs, this.bucketMs);
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

  /** Takes out of its open bucket the first item `match` accepts; false when its bucket is closed or it is not there. */
  remove(createdAtMs: number, match: (item: T) => boolean): boolean {
    const start = bucketStartOf(createdAtMs, this.bucketMs);
    const items = this.open.get(start);
    const i = items ? items.findIndex(match) : -1;
    if (i === -1) return false;
    items!.splice(i, 1);
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

/** A post as the surge window keeps it: who stands behind it (sources.ts) and its known author. */
interface SurgeItem {
  id: string;
  source: string;
  author: string | null;
}

/**
 * A closed surge bucket's sources (posts each) and known authors, kept to judge the window of a
 * surge that fires, and the source of each post it counted (to forget one removed on Reddit).
 */
interface SurgeBucketSources {
  bucketStart: number;
  sources: Map<string, number>;
  authors: Set<string>;
  posts: Map<string, string>;
}

/**
 * How far back the closed surge buckets' sources are kept: `distinct_authors` and the spam gate
 * look at the window of a detection, at most this far back.
 */
export const SURGE_SOURCES_HISTORY_MS = 6 * 3600_000;

/**
 * A surge is delivered only if the window's excess over its baseline is not carried by one or two
 * sources: without the two most active ones, the window must keep at least this share of it.
 */
export const SURGE_MIN_EXCESS_BEYOND_TOP_SOURCES = 0.5;

/**
 * All detector state of one subreddit: surge over post counts, velocity over the posts' words (both
 * by event-time bucket), rising over repeated observations of the same posts.
 *
 * Spam: both bucket detectors count sources, not posts (sources.ts: a known author, or for unknown
 * authors a title's keywords): a source counts once per surge bucket and a keyword once per source
 * per velocity bucket, so one account reposting a title moves neither much. A surge is also held
 * back when two sources carry its window's excess, and every surge and velocity detection says how
 * many distinct authors stand behind it.
 */
export class SubredditTrends {
  private readonly surge: SurgeState;
  private readonly velocity: StoryState;
  private readonly rising: RisingState;
  private readonly surgeWindow: BucketWindow<SurgeItem>;
  private readonly surgeHistory: SurgeBucketSources[] = [];
  private readonly velocityWindow: BucketWindow<VelocityPost>;
  /** Highest creation time seen: the event-time watermark. */
  private maxCreatedAtMs = -Infinity;
  /** Bucket detections of buckets ending at or before this are learnt from, not returned (backfilled history). */
  private silentUntilMs = -Infinity;
  /** Stretches without data (`markGap`) whose buckets have not all closed yet, oldest first. */
  private gaps: { fromMs: number; toMs: number }[] = [];

  constructor(
    readonly subreddit: string,
    params: TrendParams = {},
  ) {
    this.surge = createSurgeState(params.surge);
    this.velocity = createStoryState(params.velocity);
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
        const source = postSource(p);
        this.surgeWindow.add(p.createdAtMs, { id: p.id, source, author: knownAuthor(p.author) });
        this.velocityWindow.add(p.createdAtMs, { id: p.id, title: p.title, selftext: p.selftext, permalink: p.permalink, author: p.author, source, createdAtMs: p.createdAtMs });
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
   * Feeds history the detectors must learn from without announcing it (a backfill from Reddit's
   * listing): its posts count towards surge's and velocity's baselines in event time, every bucket
   * ending at or before `untilMs` closes silently, now or later (those still within the allowed
   * lateness close on a later `advance`), and nothing rising sees in it fires. The bucket holding
   * `untilMs` is live: posts created after it still fire it.
   */
  learn(posts: readonly ObservedPost[], newIds: ReadonlySet<string>, untilMs: number): void {
    this.silentUntilMs = Math.max(this.silentUntilMs, untilMs);
    this.observe(posts, newIds, untilMs);
    this.advance(untilMs);
  }

  /**
   * Nothing is known of the posts created in [fromMs, toMs) (ingestion was down, or a replayed file
   * has a hole there): an empty surge bucket wholly inside it is missing data, not a quiet bucket,
   * and surge neither learns it as zero posts nor lets the data's return read as a surge
   * (`observeSurgeGap`). Buckets with posts are counted as usual. Call it before the buckets close.
   */
  markGap(fromMs: number, toMs: number): void {
    if (!(Number.isFinite(fromMs) && Number.isFinite(toMs)) || toMs <= fromMs) return;
    this.gaps.push({ fromMs, toMs });
  }

  /** Whether the bucket lies wholly in a marked gap (gaps that ended before it are dropped). */
  private inGap(bucketStart: number, bucketMs: number): boolean {
    if (this.gaps.length === 0) return false;
    this.gaps = this.gaps.filter((g) => g.toMs > bucketStart);
    return this.gaps.some((g) => g.fromMs <= bucketStart && bucketStart + bucketMs <= g.toMs);
  }

  /**
   * Posts removed or deleted on Reddit stop counting as evidence: taken out of their open buckets
   * (surge and velocity), and out of surge's closed buckets while they are within its longest
   * window (the bucket's count drops once the source had no other post in it; distinct_authors
   * and the spam gate no longer see the source there). What the baselines already learnt from
   * them stays, and a closed velocity bucket keeps them (its keyword counts are folded in).
   * Returns how many of them counted in a surge bucket still open or within the window.
   */
  forget(posts: readonly ObservedPost[]): number {
    let n = 0;
    for (const p of posts) {
      this.velocityWindow.remove(p.createdAtMs, (it) => it.id === p.id);
      if (this.surgeWindow.remove(p.createdAtMs, (it) => it.id === p.id)) {
        n++;
        continue;
      }
      const start = bucketStartOf(p.createdAtMs, this.surgeWindow.bucketMs);
      const closed = this.surgeHistory.find((h) => h.bucketStart === start);
      const source = closed?.posts.get(p.id);
      if (closed === undefined || source === undefined) continue; // not counted there (late, or never seen here)
      closed.posts.delete(p.id);
      const left = closed.sources.get(source) ?? 1;
      if (left > 1) {
        closed.sources.set(source, left - 1);
        continue;
      }
      closed.sources.delete(source);
      // A known author is its own source (sources.ts): none of theirs is left in the bucket.
      if (source.startsWith('u/')) closed.authors.delete(source.slice(2));
      if (forgetSurgeSource(this.surge, start)) n++;
    }
    return n;
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
      const sources = new Map<string, number>();
      const authors = new Set<string>();
      const posts = new Map<string, string>();
      for (const it of b.items) {
        sources.set(it.source, (sources.get(it.source) ?? 0) + 1);
        if (it.author !== null) authors.add(it.author);
        posts.set(it.id, it.source);
      }
      if (b.items.length === 0 && this.inGap(b.bucketStart, this.surgeWindow.bucketMs)) {
        observeSurgeGap(this.surge, b.bucketStart);
        continue;
      }
      if (b.items.length > 0) this.surgeHistory.push({ bucketStart: b.bucketStart, sources, authors, posts });
      while (this.surgeHistory.length > 0 && this.surgeHistory[0].bucketStart < b.bucketStart - SURGE_SOURCES_HISTORY_MS) this.surgeHistory.shift();
      const d = observeSurgeBucket(this.surge, b.bucketStart, sources.size);
      if (d && d.bucketEnd > this.silentUntilMs) {
        const judged = this.judgeSurge(d);
        if (judged) out.push(judged);
      }
    }
    for (const b of this.velocityWindow.advance(wm)) {
      if (b.items.length === 0) continue;
      const ds = observeStoryPosts(this.velocity, b.bucketStart, b.items);
      if (b.bucketStart + this.velocityWindow.bucketMs > this.silentUntilMs) out.push(...ds);
    }
    return out;
  }

  /**
   * The surge with its window's distinct authors, or null when two sources carry its excess (each
   * source counted once per bucket, as the detector was fed).
   */
  private judgeSurge(d: SurgeDetection): SurgeDetection | null {
    const perSource = new Map<string, number>();
    const authors = new Set<string>();
    for (const h of this.surgeHistory) {
      if (h.bucketStart < d.bucketStart || h.bucketStart >= d.bucketEnd) continue;
      for (const src of h.sources.keys()) perSource.set(src, (perSource.get(src) ?? 0) + 1);
      for (const a of h.authors) authors.add(a);
    }
    const top = [...perSource.values()].sort((a, b) => b - a);
    const topTwo = (top[0] ?? 0) + (top[1] ?? 0);
    const excess = d.count - d.baseline;
    if (d.count - topTwo < d.baseline + SURGE_MIN_EXCESS_BEYOND_TOP_SOURCES * excess) return null;
    return { ...d, distinctAuthors: authors.size };
  }

  /** The widest bucket of the two bucket detectors: a watermark this far past a post has closed its buckets (plus lateness). */
  get maxBucketMs(): number {
    return Math.max(this.surgeWindow.bucketMs, this.velocityWindow.bucketMs);
  }

  get latePosts(): number {
    return this.surgeWindow.late;
  }
}
