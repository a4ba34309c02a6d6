/**
 * What `backtest --posts` says about a replay beyond the events themselves: each event's onset and
 * delay, the stretches with no posts (missing data, not quiet), and the one-line summary. Pure.
 *
 * An event's onset is what its delay is measured from:
 * - `trends.velocity`: `first_post_at` when the event carries it; otherwise the first post of the
 *   story the replay can see (`StoryOnsets`);
 * - `trends.surge`: `window_start`, the start of the window that fired;
 * - `trends.rising`: the post's `created_at`.
 * Fields are read defensively: a missing or malformed one gives no onset, never an error.
 */
import { median } from './replay-labels';
import { postKeywords } from './detectors/tokenizer';

const MIN = 60_000;
const HOUR = 60 * MIN;
export const DAY_MS = 24 * HOUR;

/**
 * A stretch with no post of at least DATA_GAP_SPACINGS × the file's median spacing between posts,
 * and at least MIN_DATA_GAP_MS, is missing data, not a quiet spell: it is drawn as a gap and left
 * out of the days events are counted over. On r/wallstreetbets (a post every 30–45 s) that is any
 * stretch of 45 minutes or more: the shared January file's missing 01-13 to 01-15, and a 51-minute
 * hole in the May file, but not the 30 quiet minutes of New Year's Day; a subreddit posting every
 * half hour needs more than a day without a post.
 */
export const DATA_GAP_SPACINGS = 60;
export const MIN_DATA_GAP_MS = 30 * MIN;

/** The story fallback walks back through posts with the event's keyword while they are at most this far apart… */
export const STORY_CHAIN_GAP_MS = 30 * MIN;
/** …and at most this far before the event (velocity groups a story's keywords over six hours). */
export const STORY_LOOKBACK_MS = 6 * HOUR;

export type OnsetSource = 'first_post_at' | 'first_visible_post' | 'window_start' | 'created_at';

export interface Onset {
  readonly onsetMs: number;
  readonly from: OnsetSource;
}

/** The event fields onsets are read from (as delivered). */
export interface OnsetEvent {
  readonly type: string;
  readonly subreddit: string;
  readonly timeMs: number;
  readonly data: Readonly<Record<string, unknown>>;
}

export interface PostView {
  readonly id: string;
  readonly subreddit: string;
  readonly createdAtMs: number;
  readonly title: string;
  readonly selftext?: string | null;
}

function isoMs(v: unknown): number | null {
  const t = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(t) ? t : null;
}

/**
 * The first visible post of a velocity event's story: from the event's time, back through the
 * subreddit's posts containing its `keyword`, while consecutive ones are at most
 * STORY_CHAIN_GAP_MS apart and within STORY_LOOKBACK_MS of the event. An estimate for events that
 * do not carry `first_post_at`; a word always in use chains back to the lookback.
 */
export class StoryOnsets {
  private readonly bySubreddit = new Map<string, PostView[]>();
  private readonly keywords = new Map<PostView, Set<string>>();

  constructor(posts: readonly PostView[]) {
    for (const p of posts) {
      const list = this.bySubreddit.get(p.subreddit);
      if (list) list.push(p);
      else this.bySubreddit.set(p.subreddit, [p]);
    }
    for (const list of this.bySubreddit.values()) list.sort((a, b) => a.createdAtMs - b.createdAtMs);
  }

  firstPost(subreddit: string, keyword: string, eventMs: number): number | null {
    const posts = this.bySubreddit.get(subreddit) ?? [];
    // Last post at or before the event.
    let lo = 0;
    let hi = posts.length;
    while (lo < hi) {
      const m = (lo + hi) >>> 1;
      if (posts[m].createdAtMs <= eventMs) lo = m + 1;
      else hi = m;
    }
    let found: number | null = null;
    let cursor = eventMs;
    for (let i = lo - 1; i >= 0; i--) {
      const t = posts[i].createdAtMs;
      if (t < eventMs - STORY_LOOKBACK_MS || (found !== null && t < cursor - STORY_CHAIN_GAP_MS)) break;
      if (this.keywordsOf(posts[i]).has(keyword)) found = cursor = t;
    }
    return found;
  }

  private keywordsOf(p: PostView): Set<string> {
    let ks = this.keywords.get(p);
    if (!ks) this.keywords.set(p, (ks = new Set(postKeywords(p.title, p.selftext ?? undefined))));
    return ks;
  }
}

/** The onset of an event (see the module comment), or null when its data does not say. */
export function eventOnset(e: OnsetEvent, stories?: StoryOnsets): Onset | null {
  const d = e.data;
  if (e.type === 'trends.velocity') {
    const first = isoMs(d.first_post_at);
    if (first !== null) return { onsetMs: first, from: 'first_post_at' };
    if (stories === undefined || typeof d.keyword !== 'string') return null;
    const seen = stories.firstPost(e.subreddit, d.keyword, e.timeMs);
    return seen === null ? null : { onsetMs: seen, from: 'first_visible_post' };
  }
  if (e.type === 'trends.surge') {
    const start = isoMs(d.window_start);
    return start === null ? null : { onsetMs: start, from: 'window_start' };
  }
  if (e.type === 'trends.rising') {
    const created = isoMs(d.created_at);
    return created === null ? null : { onsetMs: created, from: 'created_at' };
  }
  return null;
}

/** What an onset is, in words, for the text output. */
export const ONSET_WORDS: Readonly<Record<OnsetSource, string>> = {
  first_post_at: "after the story's first post",
  first_visible_post: "after the story's first post seen in the file",
  window_start: "after the surge's start",
  created_at: 'after the post was created',
};

export interface DataSpan {
  readonly firstMs: number;
  readonly lastMs: number;
  /** Stretches with no post long enough to be missing data: [last post before, first post after]. */
  readonly gaps: readonly { readonly startMs: number; readonly endMs: number }[];
  /** Days with data: last − first, less the gaps. */
  readonly days: number;
}

/** The span of post times (any order) and its gaps (see DATA_GAP_SPACINGS unless `gapMs` is given); null without posts. */
export function dataSpan(times: readonly number[], gapMs?: number): DataSpan | null {
  if (times.length === 0) return null;
  const ts = [...times].sort((a, b) => a - b);
  const spacings = ts.slice(1).map((t, i) => t - ts[i]);
  const threshold = gapMs ?? Math.max(MIN_DATA_GAP_MS, DATA_GAP_SPACINGS * (median(spacings) ?? 0));
  const gaps: { startMs: number; endMs: number }[] = [];
  let missing = 0;
  spacings.forEach((d, i) => {
    if (d < threshold) return;
    gaps.push({ startMs: ts[i], endMs: ts[i + 1] });
    missing += d;
  });
  return { firstMs: ts[0], lastMs: ts[ts.length - 1], gaps, days: (ts[ts.length - 1] - ts[0] - missing) / DAY_MS };
}

/** An event as the summary counts it. */
export interface SummaryEvent {
  readonly type: string;
  readonly timeMs: number;
  /** Event time − onset (ms), null when the onset is unknown. */
  readonly delayMs: number | null;
}

export interface KindSummary {
  readonly events: number;
  /** events / days with data (null without a span). */
  readonly perDay: number | null;
  /** Median delay of its events with a known onset (ms). */
  readonly medianDelayMs: number | null;
}

export interface ReplaySummary {
  readonly events: number;
  readonly days: number;
  readonly perDay: number | null;
  readonly byKind: Readonly<Record<string, KindSummary>>;
}

export function summarize(events: readonly SummaryEvent[], days: number): ReplaySummary {
  const rate = (n: number) => (days > 0 ? n / days : null);
  const byKind: Record<string, KindSummary> = {};
  for (const type of [...new Set(events.map((e) => e.type))].sort()) {
    const of = events.filter((e) => e.type === type);
    const delays = of.flatMap((e) => (e.delayMs === null ? [] : [e.delayMs]));
    byKind[type] = { events: of.length, perDay: rate(of.length), medianDelayMs: median(delays) };
  }
  return { events: events.length, days, perDay: rate(events.length), byKind };
}

/** `25 min`, `1 h 40 min`, `-3 min`; `?` when unknown. */
export function formatDelay(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '?';
  const total = Math.round(ms / MIN);
  const sign = total < 0 ? '-' : '';
  const m = Math.abs(total);
  return m < 60 ? `${sign}${m} min` : `${sign}${Math.floor(m / 60)} h${m % 60 === 0 ? '' : ` ${m % 60} min`}`;
}

/** Minutes to one decimal, for JSON (null stays null). */
export function delayMinutes(ms: number | null): number | null {
  return ms === null || !Number.isFinite(ms) ? null : Math.round(ms / 6_000) / 10;
}
