/** `trends.velocity`: one keyword's share of the subreddit's posts spikes (detector: src/trends/detectors/velocity.ts). */
import { absolutePermalink, EventKindDefinition, EVIDENCE_FIELDS, field, fixed, iso, lift, minutes, percent, round, round6, TrendEvidence } from '../kind';

/** What the velocity detector reports for a keyword that fired in a bucket. */
export interface VelocityDetection {
  readonly kind: 'trends.velocity';
  readonly keyword: string;
  readonly bucketStart: number;
  readonly bucketEnd: number;
  /** Posts in the bucket containing the keyword. */
  readonly count: number;
  /** Posts in the bucket. */
  readonly posts: number;
  /** count / posts. */
  readonly share: number;
  /** Share the score was measured against: the keyword's EWMA share, floored at `priorShare`. */
  readonly baselineShare: number;
  /** Signed root of the binomial deviance / dispersion (≈ z-score). */
  readonly score: number;
  readonly threshold: number;
  /** Fewest posts with the keyword that may fire (`params.minCount`). */
  readonly minCount: number;
  /** Up to `maxEvidence` ids of posts containing the keyword, in input order. */
  readonly postIds: readonly string[];
  readonly permalinks: readonly string[];
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

export const VELOCITY: EventKindDefinition<'trends.velocity', VelocityDetection, VelocityEventData> = {
  kind: 'trends.velocity',
  summary: "One keyword's share of the subreddit's posts spikes.",
  fields: {
    ...EVIDENCE_FIELDS,
    keyword: field('string', 'The keyword, lower-cased and lightly stemmed.'),
    count: field('integer', 'Posts in the window containing the keyword (= observed).'),
    posts: field('integer', 'All posts of the subreddit in the window.'),
    share: field('number', 'count / posts.'),
    baseline_share: field('number', "The keyword's usual share; expected = posts × baseline_share."),
    score: field('number', 'Signed root of the binomial deviance over the dispersion (≈ z-score).'),
    min_count: field('integer', 'Fewest posts with the keyword that may fire at all.'),
    post_ids: field('string[]', 'Ids of up to 10 posts of the window containing the keyword.'),
    permalinks: field('string[]', 'Their absolute reddit.com permalinks, in the same order.'),
  },
  example: {
    type: 'trends.velocity',
    timestamp: '2026-03-03T08:30:00.000Z',
    data: {
      event_id: 'evt_01KJSX4M8G0000000000000002',
      webhook_id: '01KJSX4M8G0000000000000003',
      subreddit: 'demo',
      window_start: '2026-03-03T08:00:00.000Z',
      window_end: '2026-03-03T08:30:00.000Z',
      observed: 14,
      expected: 0.066,
      lift: 212.121,
      threshold: 5,
      keyword: 'eclipse',
      count: 14,
      posts: 33,
      share: 0.424242,
      baseline_share: 0.002,
      score: 9.3,
      min_count: 3,
      post_ids: ['1b2c3d4'],
      permalinks: ['https://www.reddit.com/r/demo/comments/1b2c3d4/'],
    },
  },
  toData: (d) => {
    const expected = d.posts * d.baselineShare;
    return {
      window_start: iso(d.bucketStart),
      window_end: iso(d.bucketEnd),
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
  },
  identity: (d) => ({ windowStartMs: d.bucketStart, discriminator: d.keyword, createdAtMs: d.bucketEnd }),
  visibleAt: 'window_end',
  describe: (data) =>
    `"${data.keyword}" in ${data.count} of ${data.posts} posts in ${minutes(data.window_start, data.window_end)} (${percent(data.share)} vs ${percent(data.baseline_share)} usual, score ${fixed(data.score)})`,
};
