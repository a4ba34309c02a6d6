/** `trends.surge`: the subreddit posts far more than usual (detector: src/trends/detectors/surge.ts). */
import { EventKindDefinition, EVIDENCE_FIELDS, field, fixed, iso, lift, minutes, round, TrendEvidence } from '../kind';

/** What the surge detector reports when a window of buckets fires. */
export interface SurgeDetection {
  readonly kind: 'trends.surge';
  /**
   * What fired: `lift`, the window's posts reached `liftTrigger` times the seasonal expectation
   * (then `score` is that lift and `threshold` the trigger); `score`, the learnt-bar score did.
   */
  readonly trigger: 'lift' | 'score';
  /** On an update of an episode already reported: the start of its first window. */
  readonly episodeStart?: number;
  /** On an update: the highest lift reported before in the episode, and that report's posts and window end. */
  readonly previous?: { readonly lift: number; readonly count: number; readonly windowEnd: number };
  /** Start of the first bucket of the evidence window (ms since epoch). */
  readonly bucketStart: number;
  /** End (exclusive) of the bucket that fired. */
  readonly bucketEnd: number;
  /** Posts in the window. */
  readonly count: number;
  /** Posts expected in the window. */
  readonly baseline: number;
  /** (count − baseline) / score: the spread under which the score reads as a z-score (posts). */
  readonly stddev: number;
  /** ln((count + k_w) / (baseline + k_w)) / scale, the subreddit's robust scale of that log lift at the window's time scale. */
  readonly score: number;
  /** The bar the score reached: the subreddit's own (from its recent daily score maxima), never below the `threshold` parameter. */
  readonly threshold: number;
  /** Buckets in the evidence window (`shortWindowBuckets` or `windowBuckets`: whichever time scale fired; fewer right after warm-up). */
  readonly windowBuckets: number;
  /** Whether the hour-of-day offset was part of the baseline. */
  readonly seasonal: boolean;
  /**
   * Distinct known authors of the window's posts. The detector counts posts; the trend pipeline,
   * which knows the authors, sets this (absent: 0, no author known).
   */
  readonly distinctAuthors?: number;
}

/** `trends.surge`: the subreddit posts far more than usual. */
export interface SurgeEventData extends TrendEvidence {
  /** Posts in the window (= `observed`). */
  count: number;
  /** Posts the model expected in the window: level with the hour-of-day offset (= `expected`). */
  baseline: number;
  /** The spread under which `score` reads as a z-score: (count − baseline) / score (the model scores ln(lift) against the subreddit's own robust scale). */
  stddev: number;
  /** ln((count + 5) / (baseline + 5)) over the subreddit's robust scale of it at that window length, = (count − baseline) / stddev; it reached `threshold` (the subreddit's own bar). */
  score: number;
  /** Buckets in the window that fired: 3 (15 minutes) or 36 (3 hours) five-minute buckets by default; fewer just after warm-up. */
  window_buckets: number;
  /** Whether the hour-of-day pattern was part of `baseline`. */
  seasonal: boolean;
  /** Distinct known authors of the window's posts; 0 when no author is known (deleted accounts). */
  distinct_authors: number;
  /** What fired: `lift` (the window reached `threshold` times the seasonal expectation; `score` is then that lift) or `score` (the subreddit's own learnt bar). */
  trigger: 'lift' | 'score';
  /** Whether this is a later event of an episode already reported (it grew well past what was reported). */
  update: boolean;
  /** Start of the window of the episode's first event (= window_start unless `update`). */
  episode_start: string;
  /** On an update, what was reported before: the episode's highest lift so far, and the previous event's posts in its window; 0 on an episode's first event. */
  previous_lift: number;
  previous_observed: number;
}

export const SURGE: EventKindDefinition<'trends.surge', SurgeDetection, SurgeEventData> = {
  kind: 'trends.surge',
  summary: 'The subreddit posts far more than usual.',
  fields: {
    ...EVIDENCE_FIELDS,
    count: field('integer', 'Posts in the window (= observed).'),
    baseline: field('number', 'Posts the model expected in the window (= expected).'),
    stddev: field('number', 'The spread under which `score` reads as a z-score.'),
    score: field('number', 'The detector score that reached `threshold`.'),
    window_buckets: field('integer', 'Five-minute buckets in the window that fired (3 or 36 by default: a 15-minute burst or a 3-hour lift).'),
    seasonal: field('boolean', 'Whether the hour-of-day pattern was part of `baseline`.'),
    distinct_authors: field('integer', "Distinct known authors of the window's posts; 0 when no author is known (deleted accounts)."),
    trigger: field('string', 'What fired: `lift` (the window reached `threshold` times the seasonal expectation, `score` is that lift) or `score` (the learnt-bar score reached `threshold`).'),
    update: field('boolean', 'True on a later event of an episode already reported: it grew well past what was reported.'),
    episode_start: field('date-time', "Start of the window of the episode's first event (= window_start unless `update`)."),
    previous_lift: field('number', 'On an update, the highest lift reported before in the episode; 0 on its first event.'),
    previous_observed: field('integer', "On an update, the previous event's posts in its window; 0 on an episode's first event."),
  },
  example: {
    // An update of an episode (every field present): first reported at 2.8× (12:05–12:20), it grew to 9×.
    type: 'trends.surge',
    timestamp: '2026-03-03T13:05:00.000Z',
    data: {
      event_id: 'evt_01KJSX4M8G0000000000000000',
      webhook_id: '01KJSX4M8G0000000000000001',
      subreddit: 'demo',
      window_start: '2026-03-03T12:20:00.000Z',
      window_end: '2026-03-03T13:05:00.000Z',
      observed: 270,
      expected: 30,
      lift: 9,
      threshold: 6,
      count: 270,
      baseline: 30,
      stddev: 26.667,
      score: 9,
      window_buckets: 9,
      seasonal: true,
      distinct_authors: 231,
      trigger: 'lift',
      update: true,
      episode_start: '2026-03-03T12:05:00.000Z',
      previous_lift: 2.8,
      previous_observed: 28,
    },
  },
  toData: (d) => ({
    window_start: iso(d.bucketStart),
    window_end: iso(d.bucketEnd),
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
    distinct_authors: d.distinctAuthors ?? 0,
    trigger: d.trigger,
    update: d.previous !== undefined,
    episode_start: iso(d.episodeStart ?? d.bucketStart),
    previous_lift: d.previous ? round(d.previous.lift) : 0,
    previous_observed: d.previous ? d.previous.count : 0,
  }),
  identity: (d) => ({ windowStartMs: d.bucketStart, discriminator: '', createdAtMs: d.bucketEnd }),
  visibleAt: 'window_end',
  describe: (data) =>
    `${data.update ? `grew to ` : ''}${data.count} posts in ${minutes(data.window_start, data.window_end)} vs ${fixed(data.baseline)} expected (${data.trigger === 'lift' ? `${fixed(data.lift)}×` : `z=${fixed(data.score)}`})${data.update ? `, was ${fixed(data.previous_lift)}×` : ''}`,
};
