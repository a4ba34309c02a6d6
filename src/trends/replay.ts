/**
 * Replays Reddit posts through the trend pipeline's own code path, in event time: each post becomes
 * the stored entity ingest would write (`toPostEntity`), the detectors' view of it (`observedPost`),
 * and is fed to the subreddit's `SubredditTrends` as a poller that sees posts as they are created
 * would; detections become events exactly as the pipeline delivers them (`toTrendEvent`). Nothing
 * is stored or sent: what comes out is what a subscriber would have received, and when.
 */
import { RedditPost } from '../posts/reddit-parse';
import { toPostEntity } from '../posts/ingest.service';
import type { EventKind } from '../events/catalogue';
import { DEFAULT_LATENESS_MS, SubredditTrends, TrendParams } from './subreddit-trends';
import { observedPost, toTrendEvent, TrendEvent } from './trend-event';
import { dataSpan } from './replay-report';

export interface ReplayedEvent {
  type: EventKind;
  subreddit: string;
  /**
   * When the pipeline would have emitted it (ms): for surge and velocity the instant its bucket
   * closes (the bucket's end plus the allowed lateness), for rising the observation that fired.
   */
  timeMs: number;
  event: TrendEvent;
}

export interface ReplayResult {
  events: ReplayedEvent[];
  /** Posts fed (distinct ids), per subreddit. */
  posts: Record<string, number>;
  /** Creation times of the first and last post replayed (null when there were none). */
  firstPostMs: number | null;
  lastPostMs: number | null;
}

/**
 * Posts in any order (sorted here by creation time, then id; a repeated id counts once, as the
 * posts store would). Every subreddit has its own detector state, as in production. A subreddit's
 * stretches with no post long enough to be missing data (`dataSpan`, what the report draws as
 * gaps) are told to its detectors as gaps, as the poller tells the pipeline of a read that
 * could not reach back: a hole in the file is not hours of silence.
 */
export function replayPosts(posts: readonly RedditPost[], params: TrendParams = {}): ReplayResult {
  const seen = new Set<string>();
  const unique = posts.filter((p) => !seen.has(p.id) && seen.add(p.id));
  unique.sort((a, b) => a.createdAtMs - b.createdAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const lateness = params.latenessMs ?? DEFAULT_LATENESS_MS;
  const states = new Map<string, SubredditTrends>();
  const counts: Record<string, number> = {};
  const events: ReplayedEvent[] = [];
  const emit = (subreddit: string, st: SubredditTrends, watermarkMs: number) => {
    for (const d of st.advance(watermarkMs)) {
      const event = toTrendEvent(subreddit, d);
      events.push({ type: event.type, subreddit, timeMs: event.createdAt.getTime() + lateness, event });
    }
  };
  const open = (subreddit: string): SubredditTrends => {
    const st = new SubredditTrends(subreddit, params);
    const own = unique.filter((p) => p.subreddit === subreddit).map((p) => p.createdAtMs);
    for (const g of dataSpan(own)?.gaps ?? []) st.markGap(g.startMs, g.endMs);
    states.set(subreddit, st);
    return st;
  };
  for (const p of unique) {
    const st = states.get(p.subreddit) ?? open(p.subreddit);
    counts[p.subreddit] = (Object.hasOwn(counts, p.subreddit) ? counts[p.subreddit] : 0) + 1;
    // A live poller's clock has reached this post: buckets that closed before it are emitted first.
    emit(p.subreddit, st, p.createdAtMs);
    const entity = toPostEntity(p, new Date(p.createdAtMs));
    for (const d of st.observe([observedPost(entity)], new Set([p.id]), p.createdAtMs)) {
      const event = toTrendEvent(p.subreddit, d);
      events.push({ type: event.type, subreddit: p.subreddit, timeMs: p.createdAtMs, event });
    }
  }
  // After the last post the clock runs on until every bucket that holds a post has closed.
  const last = unique.length > 0 ? unique[unique.length - 1].createdAtMs : null;
  if (last !== null) for (const [subreddit, st] of states) emit(subreddit, st, last + st.maxBucketMs + lateness);
  events.sort((a, b) => a.timeMs - b.timeMs);
  return { events, posts: counts, firstPostMs: unique.length > 0 ? unique[0].createdAtMs : null, lastPostMs: last };
}
