/** `trends.velocity`: one keyword's (one story's) share of the subreddit's posts spikes (detector: src/trends/detectors/velocity.ts). */
import { absolutePermalink, EventKindDefinition, EVIDENCE_FIELDS, field, fixed, iso, lift, minutes, percent, round, round6, TrendEvidence } from '../kind';

/** What the velocity detector reports for a keyword that fired in a bucket. */
export interface VelocityDetection {
  readonly kind: 'trends.velocity';
  readonly keyword: string;
  readonly bucketStart: number;
  readonly bucketEnd: number;
  /** The story's keywords: `keyword` first, then the others that fired in the same posts, by score. */
  readonly keywords: readonly string[];
  /** Independent posts in the bucket containing the keyword (one per known author, one per distinct title of unknown authors). */
  readonly count: number;
  /** Independent posts in the bucket. */
  readonly posts: number;
  /** Distinct known authors of the posts containing the keyword (0 when no author is known). */
  readonly distinctAuthors: number;
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
  /** The keyword, lower-cased and lightly stemmed (`movies` → `movy`); a ticker without its `$`. The story's highest-scoring keyword. */
  keyword: string;
  /** Every keyword of the story: `keyword` first, then the others that spiked in the same posts (`josh`, `brown`). */
  keywords: string[];
  /** Posts in the window containing the keyword (= `observed`), counted independently: a known author's posts count once, and so do reposts of one title by unknown authors. */
  count: number;
  /** All posts of the subreddit in the window, counted the same way. */
  posts: number;
  /** Distinct known authors of the posts containing the keyword; 0 when no author is known (deleted accounts), where distinct titles were counted instead. */
  distinct_authors: number;
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
    keyword: field('string', "The keyword, lower-cased and lightly stemmed (a ticker without its `$`): the story's highest-scoring keyword."),
    keywords: field('string[]', 'Every keyword of the story, `keyword` first, then the others that spiked in the same posts.'),
    count: field('integer', "Posts in the window containing the keyword (= observed); a known author's posts count once, and so do reposts of one title by unknown authors."),
    posts: field('integer', 'All posts of the subreddit in the window, counted the same way.'),
    distinct_authors: field('integer', 'Distinct known authors of the posts containing the keyword; 0 when no author is known (deleted accounts), where distinct titles were counted instead.'),
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
      keywords: ['eclipse', 'totality'],
      count: 14,
      posts: 33,
      distinct_authors: 12,
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
      keywords: [...d.keywords],
      count: d.count,
      posts: d.posts,
      distinct_authors: d.distinctAuthors,
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
    // Events stored before `keywords` existed have `keyword` alone.
    `"${Array.isArray(data.keywords) ? data.keywords.join(' + ') : data.keyword}" in ${data.count} of ${data.posts} posts in ${minutes(data.window_start, data.window_end)} (${percent(data.share)} vs ${percent(data.baseline_share)} usual, score ${fixed(data.score)})`,
};
