/** `trends.surge`: the subreddit posts far more than usual (detector: src/trends/detectors/surge.ts). */
import { EventKindDefinition, EVIDENCE_FIELDS, field, fixed, iso, lift, minutes, round, TrendEvidence } from '../kind';

/** What the surge detector reports when a window of buckets fires. */
export interface SurgeDetection {
  readonly kind: 'trends.surge';
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
  },
  example: {
    type: 'trends.surge',
    timestamp: '2026-03-03T13:05:00.000Z',
    data: {
      event_id: 'evt_01KJSX4M8G0000000000000000',
      webhook_id: '01KJSX4M8G0000000000000001',
      subreddit: 'demo',
      window_start: '2026-03-03T10:05:00.000Z',
      window_end: '2026-03-03T13:05:00.000Z',
      observed: 27,
      expected: 5,
      lift: 5.4,
      threshold: 4,
      count: 27,
      baseline: 5,
      stddev: 2.292,
      score: 9.6,
      window_buckets: 36,
      seasonal: true,
      distinct_authors: 23,
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
  }),
  identity: (d) => ({ windowStartMs: d.bucketStart, discriminator: '', createdAtMs: d.bucketEnd }),
  visibleAt: 'window_end',
  describe: (data) => `${data.count} posts in ${minutes(data.window_start, data.window_end)} vs ${fixed(data.baseline)} expected (z=${fixed(data.score)})`,
};
