import { Inject, Injectable, Logger } from '@nestjs/common';
import { CLOCK, Clock } from '../common/clock';
import { EventsService } from '../delivery/events.service';
import { Detection } from '../events/catalogue';
import type { IngestedInfo, IngestListener } from '../posts/ingest.service';
import { PostEntity } from '../posts/post.entity';
import { PostStore } from '../posts/post.store';
import { resolveRisingParams, resolveStoryParams, resolveSurgeParams } from './detectors';
import { SubredditTrends } from './subreddit-trends';
import { observedPost, toTrendEvent } from './trend-event';
import { DEFAULT_HISTORY_MS, TRENDS_OPTIONS, TrendsModuleOptions } from './trends.options';
import { dataSpan } from './replay-report';

/**
 * posts store → detectors (event-time order) → events → deliveries. Fed by the poller and by
 * `trendhooks ingest` (it is the posts module's ingest listener). Detector state lives in memory,
 * per subreddit, bounded by the detectors; on first sight of a subreddit it is rebuilt from the
 * stored history with emissions suppressed, so a restart neither forgets nor re-announces. A
 * subreddit's first read from Reddit is a backfill of its history (`backfillUntil`): learnt the
 * same way, in event time, announcing nothing about buckets that ended before it.
 */
@Injectable()
export class TrendsPipeline implements IngestListener {
  private readonly logger = new Logger('TrendsPipeline');
  private readonly subs = new Map<string, Promise<SubredditTrends>>();

  constructor(
    private readonly events: EventsService,
    private readonly posts: PostStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(TRENDS_OPTIONS) private readonly options: TrendsModuleOptions,
  ) {
    // Detector states are made per subreddit on its first posts: bad parameters stop the module
    // here, naming the parameter, instead of failing every subreddit's ingestion later.
    resolveSurgeParams(options.params?.surge);
    resolveStoryParams(options.params?.velocity);
    resolveRisingParams(options.params?.rising);
  }

  /**
   * The detector state of a subreddit, warmed up from its stored posts on first sight: those of
   * `arriving` (the batch that brings the subreddit, which the caller feeds next) left out.
   */
  private state(subreddit: string, arriving: ReadonlySet<string> = new Set()): Promise<SubredditTrends> {
    let st = this.subs.get(subreddit);
    if (!st) {
      st = this.warmUp(subreddit, arriving);
      this.subs.set(subreddit, st);
      st.catch(() => this.subs.delete(subreddit));
    }
    return st;
  }

  /**
   * Everything stored of the subreddit within historyMs, whoever stored it (this process before a
   * restart, or another process that polled it before this one took it over, its backfill included).
   */
  private async warmUp(subreddit: string, arriving: ReadonlySet<string>): Promise<SubredditTrends> {
    const st = new SubredditTrends(subreddit, this.options.params);
    const now = this.clock.now();
    const since = new Date(now.getTime() - (this.options.historyMs ?? DEFAULT_HISTORY_MS));
    const history = (await this.posts.history(subreddit, since)).filter((p) => !arriving.has(p.id));
    if (history.length > 0) {
      // Holes in the stored history (reads that could not reach back) are gaps, as in a replay.
      for (const g of dataSpan(history.map((p) => p.createdAt.getTime()))?.gaps ?? []) st.markGap(g.startMs, g.endMs);
      const posts = history.map(observedPost);
      st.observe(posts, new Set(posts.map((p) => p.id)), now.getTime());
      st.advance(); // detections over history are not announced again
    }
    return st;
  }

  /** IngestListener: new and refreshed posts, as stored. */
  async onPostsUpserted(posts: readonly PostEntity[], info: IngestedInfo): Promise<void> {
    const bySub = new Map<string, PostEntity[]>();
    for (const p of posts) {
      const list = bySub.get(p.subreddit);
      if (list) list.push(p);
      else bySub.set(p.subreddit, [p]);
    }
    for (const [subreddit, list] of bySub) {
      list.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
      const st = await this.state(subreddit, info.insertedIds);
      if (info.backfillUntil) {
        // History from a first read: a baseline at once, and nothing announced about its past.
        st.learn(list.map(observedPost), info.insertedIds, info.backfillUntil.getTime());
        continue;
      }
      const observedAt = Math.max(...list.map((p) => p.updatedAt.getTime()));
      const detections = st.observe(list.map(observedPost), info.insertedIds, observedAt);
      detections.push(...st.advance());
      await this.emit(subreddit, detections);
    }
  }

  /**
   * Posts removed on Reddit stop counting (SubredditTrends.forget), in the subreddits whose
   * detectors this process holds; one it does not hold warms up later from what is still stored.
   */
  async onPostsRemoved(posts: readonly PostEntity[]): Promise<void> {
    for (const p of posts) {
      const st = this.subs.get(p.subreddit);
      if (st) (await st).forget([observedPost(p)]);
    }
  }

  /**
   * Nothing is known of the subreddit's posts created in [fromMs, toMs) (a read that could not reach
   * back that far): its detectors treat the stretch as missing data, not silence. Call it before the
   * posts after the hole are stored. Held in this process's detector state; after a restart the
   * warm-up finds the hole in the stored history.
   */
  async markGap(subreddit: string, fromMs: number, toMs: number): Promise<void> {
    (await this.state(subreddit)).markGap(fromMs, toMs);
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
