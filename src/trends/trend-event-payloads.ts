/**
 * The `data` of each trend event, as delivered in a webhook body
 * `{"type": "<kind>", "timestamp": "<ISO 8601>", "data": {…}}`. One interface per kind, field by
 * field; these are the contract a receiver codes against (the README's "Event payloads" section
 * says the same in prose). The delivery layer adds `event_id`, `webhook_id` and `subreddit`
 * (`DeliveredTrendEvent`).
 *
 * Every kind answers "why did this fire?" with the same five plain fields — `observed`, `expected`,
 * `lift`, `window_start`/`window_end` and the detector's score against its `threshold` — and then
 * its own evidence. Numbers are rounded to 3 decimals (shares to 6); times are ISO 8601 UTC.
 */

/** Fields every trend event carries, whatever its kind. */
export interface TrendEvidence {
  /** Start (inclusive) of the time the figures were measured over. */
  window_start: string;
  /** End (exclusive) of that time: when the trend became visible. */
  window_end: string;
  /** What was seen in the window, in the kind's unit (posts for surge and velocity, points per hour for rising). */
  observed: number;
  /** What the detector's baseline expected in the same window and unit. */
  expected: number;
  /** observed / expected (×): how many times the usual figure. */
  lift: number;
  /** The detector's threshold that the score reached (for rising the score is `z_score`). */
  threshold: number;
}

/** `trends.surge`: the subreddit posts far more than usual. */
export interface SurgeEventData extends TrendEvidence {
  /** Posts in the window (= `observed`). */
  count: number;
  /** Posts the model expected in the window: level with the hour-of-day offset (= `expected`). */
  baseline: number;
  /** The spread under which `score` reads as a z-score: (count − baseline) / score (the model scores ln(lift) against the subreddit's own robust scale). */
  stddev: number;
  /** ln((count + 5) / (baseline + 5)) over the subreddit's robust scale of it, = (count − baseline) / stddev; it reached `threshold`. */
  score: number;
  /** Buckets in the window that was scored (24 five-minute buckets by default; fewer just after warm-up). */
  window_buckets: number;
  /** Whether the hour-of-day pattern was part of `baseline`. */
  seasonal: boolean;
}

/** `trends.velocity`: one keyword's share of the subreddit's posts spikes. */
export interface VelocityEventData extends TrendEvidence {
  /** The keyword, lower-cased and lightly stemmed (`movies` → `movy`). */
  keyword: string;
  /** Posts in the window containing the keyword (= `observed`). */
  count: number;
  /** All posts of the subreddit in the window. */
  posts: number;
  /** count / posts. */
  share: number;
  /** The keyword's usual share (floored at the detector's prior); `expected` = posts × baseline_share. */
  baseline_share: number;
  /** Signed root of the binomial deviance of count against baseline_share, over the dispersion (≈ z-score). */
  score: number;
  /** Fewest posts with the keyword that may fire at all. */
  min_count: number;
  /** Ids of up to 10 posts of the window containing the keyword (a sample, in post order). */
  post_ids: string[];
  /** Their absolute reddit.com permalinks, in the same order. */
  permalinks: string[];
}

/** `trends.rising`: a young post gaining score and comments far faster than the subreddit's norm. */
export interface RisingEventData extends TrendEvidence {
  /** The post (Reddit id without prefix). */
  post_id: string;
  permalink: string;
  title: string;
  /** When the post was created. */
  created_at: string;
  /** Age of the post at `observed_at`, in minutes. */
  age_minutes: number;
  /** The post's Reddit score at `observed_at` (not the detector's score: that is `z_score`). */
  score: number;
  num_comments: number;
  /** Score points gained between window_start and window_end. */
  score_gained: number;
  /** Comments gained between window_start and window_end. */
  comments_gained: number;
  score_per_hour: number;
  comments_per_hour: number;
  /** score_per_hour + 2 · comments_per_hour (= `observed`). */
  growth_per_hour: number;
  /** The subreddit's median growth of young posts (= `expected`). */
  baseline_per_hour: number;
  /** (ln growth − median) / robust spread: the detector's score that reached `threshold`. */
  z_score: number;
  /** The re-read that fired (= `window_end`). */
  observed_at: string;
}

export interface TrendEventDataByKind {
  'trends.surge': SurgeEventData;
  'trends.velocity': VelocityEventData;
  'trends.rising': RisingEventData;
}

export type TrendEventData = SurgeEventData | VelocityEventData | RisingEventData;

/** What the delivery layer adds to every event's data. */
export interface DeliveredEventFields {
  event_id: string;
  webhook_id: string;
  subreddit: string;
}

/** A trend event's `data` as a receiver sees it. */
export type DeliveredTrendEvent<K extends keyof TrendEventDataByKind = keyof TrendEventDataByKind> = TrendEventDataByKind[K] &
  DeliveredEventFields;
