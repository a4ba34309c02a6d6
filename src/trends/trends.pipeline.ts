import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, LessThan, MoreThanOrEqual } from 'typeorm';
import { CLOCK, Clock } from '../common/clock';
import { EventsService } from '../delivery/events.service';
import type { IngestListener } from '../posts/ingest.service';
import { PostEntity } from '../posts/post.entity';
import { eventKey } from './detectors';
import { Detection, ObservedPost, SubredditTrends } from './subreddit-trends';
import { RisingEventData, SurgeEventData, TrendEventDataByKind, VelocityEventData } from './trend-event-payloads';
import { TRENDS_OPTIONS, TrendsModuleOptions } from './trends.options';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
const DEFAULT_HISTORY_MS = 3 * 24 * 3600_000;

/** `evt_` + 26 base32 characters of SHA-256(event key): the same detection always has the same id. */
export function trendEventId(key: string): string {
  const digest = createHash('sha256').update(key).digest();
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 26) {
      out += CROCKFORD[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return `evt_${out}`;
}

/** A trend event before delivery: deterministic id, the detector's evidence as typed snake_case `data`. */
export interface TrendEvent<K extends keyof TrendEventDataByKind = keyof TrendEventDataByKind> {
  id: string;
  type: K;
  createdAt: Date;
  data: TrendEventDataByKind[K];
}

/** The event a detection becomes (payload fields: src/trends/trend-event-payloads.ts). */
export function toTrendEvent(subreddit: string, d: Detection): TrendEvent {
  switch (d.kind) {
    case 'trends.surge': {
      const data: SurgeEventData = {
        window_start: new Date(d.bucketStart).toISOString(),
        window_end: new Date(d.bucketEnd).toISOString(),
        observed: d.count,
        expected: round(d.baseline),
        lift: lift(d.count, d.baseline),
        threshold: d.threshold,
        count: d.count,
        baseline: round(d.baseline),
        stddev: round(d.stddev),
        score: round(d.score),
        window_buckets: d.windowBuckets,
        seasonal: d.seasonal,
      };
      return { id: trendEventId(eventKey(d.kind, subreddit, d.bucketStart, '')), type: d.kind, createdAt: new Date(d.bucketEnd), data };
    }
    case 'trends.velocity': {
      const expected = d.posts * d.baselineShare;
      const data: VelocityEventData = {
        window_start: new Date(d.bucketStart).toISOString(),
        window_end: new Date(d.bucketEnd).toISOString(),
        observed: d.count,
        expected: round(expected),
        lift: lift(d.count, expected),
        threshold: d.threshold,
        keyword: d.keyword,
        count: d.count,
        posts: d.posts,
        share: round6(d.share),
        baseline_share: round6(d.baselineShare),
        score: round(d.score),
        min_count: d.minCount,
        post_ids: [...d.postIds],
        permalinks: d.permalinks.map(absolutePermalink),
      };
      return {
        id: trendEventId(eventKey(d.kind, subreddit, d.bucketStart, d.keyword)),
        type: d.kind,
        createdAt: new Date(d.bucketEnd),
        data,
      };
    }
    case 'trends.rising': {
      const hours = (d.observedAt - d.sinceMs) / 3600_000;
      const data: RisingEventData = {
        window_start: new Date(d.sinceMs).toISOString(),
        window_end: new Date(d.observedAt).toISOString(),
        observed: round(d.growthPerHour),
        expected: round(d.baselinePerHour),
        lift: lift(d.growthPerHour, d.baselinePerHour),
        threshold: d.threshold,
        post_id: d.postId,
        permalink: absolutePermalink(d.permalink),
        title: d.title,
        created_at: new Date(d.createdUtcMs).toISOString(),
        age_minutes: round(d.ageMinutes),
        score: d.score,
        num_comments: d.numComments,
        score_gained: Math.round(d.scorePerHour * hours),
        comments_gained: Math.round(d.commentsPerHour * hours),
        score_per_hour: round(d.scorePerHour),
        comments_per_hour: round(d.commentsPerHour),
        growth_per_hour: round(d.growthPerHour),
        baseline_per_hour: round(d.baselinePerHour),
        z_score: round(d.zScore),
        observed_at: new Date(d.observedAt).toISOString(),
      };
      return { id: trendEventId(eventKey(d.kind, subreddit, d.createdUtcMs, d.postId)), type: d.kind, createdAt: new Date(d.observedAt), data };
    }
  }
}

/** observed / expected; an expectation below 1e-3 (in the kind's unit) counts as 1e-3, so lift stays finite. */
function lift(observed: number, expected: number): number {
  return round(observed / Math.max(expected, 1e-3));
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

function absolutePermalink(p: string): string {
  return p.startsWith('/') ? `https://www.reddit.com${p}` : p;
}

function observed(p: PostEntity): ObservedPost {
  return {
    id: p.id,
    createdAtMs: p.createdAt.getTime(),
    title: p.title,
    selftext: p.selftext,
    permalink: p.permalink,
    score: p.score,
    numComments: p.numComments,
  };
}

/**
 * posts store → detectors (event-time order) → events → deliveries. Fed by the poller and by
 * `trendhooks ingest` (it is the posts module's ingest listener). Detector state lives in memory,
 * per subreddit, bounded by the detectors; on first sight of a subreddit it is rebuilt from the
 * stored history with emissions suppressed, so a restart neither forgets nor re-announces.
 */
@Injectable()
export class TrendsPipeline implements IngestListener {
  private readonly logger = new Logger('TrendsPipeline');
  private readonly subs = new Map<string, Promise<SubredditTrends>>();
  private readonly startedAt: Date;

  constructor(
    private readonly events: EventsService,
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(TRENDS_OPTIONS) private readonly options: TrendsModuleOptions,
  ) {
    this.startedAt = clock.now();
  }

  /** The detector state of a subreddit, warmed up from the posts stored before this process started. */
  private state(subreddit: string): Promise<SubredditTrends> {
    let st = this.subs.get(subreddit);
    if (!st) {
      st = this.warmUp(subreddit);
      this.subs.set(subreddit, st);
      st.catch(() => this.subs.delete(subreddit));
    }
    return st;
  }

  private async warmUp(subreddit: string): Promise<SubredditTrends> {
    const st = new SubredditTrends(subreddit, this.options.params);
    const since = new Date(this.clock.now().getTime() - (this.options.historyMs ?? DEFAULT_HISTORY_MS));
    const history = await this.ds.getRepository(PostEntity).find({
      where: { subreddit, createdAt: MoreThanOrEqual(since), firstSeenAt: LessThan(this.startedAt) },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
    if (history.length > 0) {
      const posts = history.map(observed);
      st.observe(posts, new Set(posts.map((p) => p.id)), this.startedAt.getTime());
      st.advance(); // detections over history are not announced again
    }
    return st;
  }

  /** IngestListener: new and refreshed posts, as stored. */
  async onPostsUpserted(posts: readonly PostEntity[], info: { insertedIds: ReadonlySet<string> }): Promise<void> {
    const bySub = new Map<string, PostEntity[]>();
    for (const p of posts) {
      const list = bySub.get(p.subreddit);
      if (list) list.push(p);
      else bySub.set(p.subreddit, [p]);
    }
    for (const [subreddit, list] of bySub) {
      list.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
      const st = await this.state(subreddit);
      const observedAt = Math.max(...list.map((p) => p.updatedAt.getTime()));
      const detections = st.observe(list.map(observed), info.insertedIds, observedAt);
      detections.push(...st.advance());
      await this.emit(subreddit, detections);
    }
  }

  /** Processing-time watermark for live polling: closes the buckets of a quiet subreddit too. */
  async tick(subreddit: string, now: Date = this.clock.now()): Promise<number> {
    const st = await this.state(subreddit);
    const detections = st.advance(now.getTime());
    await this.emit(subreddit, detections);
    return detections.length;
  }

  private async emit(subreddit: string, detections: Detection[]): Promise<void> {
    for (const d of detections) {
      const ev = toTrendEvent(subreddit, d);
      const res = await this.events.emit({ ...ev, data: { ...ev.data }, subreddit });
      if (res.created) this.logger.log(`${ev.type} in r/${subreddit}: event ${ev.id}, ${res.deliveries} deliveries`);
    }
  }
}
