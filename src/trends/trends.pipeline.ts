import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectTrendhooksDataSource } from '../database/data-source.token';
import { DataSource, LessThan, MoreThanOrEqual } from 'typeorm';
import { crockfordBase32 } from '../common/base32';
import { CLOCK, Clock } from '../common/clock';
import { EventsService } from '../delivery/events.service';
import { definitionOf, Detection, EventKind, TrendEventDataByKind } from '../events/catalogue';
import type { IngestListener } from '../posts/ingest.service';
import { PostEntity } from '../posts/post.entity';
import { eventKey } from './detectors';
import { ObservedPost, SubredditTrends } from './subreddit-trends';
import { TRENDS_OPTIONS, TrendsModuleOptions } from './trends.options';

const DEFAULT_HISTORY_MS = 3 * 24 * 3600_000;

/** `evt_` + 26 base32 characters of SHA-256(event key): the same detection always has the same id. */
export function trendEventId(key: string): string {
  return `evt_${crockfordBase32(createHash('sha256').update(key).digest(), 26)}`;
}

/** A trend event before delivery: deterministic id, the detector's evidence as typed snake_case `data`. */
export interface TrendEvent<K extends EventKind = EventKind> {
  id: string;
  type: K;
  createdAt: Date;
  data: TrendEventDataByKind[K];
}

/** The event a detection becomes: its kind's definition in the event catalogue says how. */
export function toTrendEvent(subreddit: string, d: Detection): TrendEvent {
  const kind = definitionOf(d);
  const { windowStartMs, discriminator, createdAtMs } = kind.identity(d);
  return { id: trendEventId(eventKey(d.kind, subreddit, windowStartMs, discriminator)), type: d.kind, createdAt: new Date(createdAtMs), data: kind.toData(d) };
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
    @InjectTrendhooksDataSource() private readonly ds: DataSource,
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
