/**
 * `trends.velocity`: a new subject (a story) that many distinct authors post about within the hour
 * (detector: src/trends/detectors/stories.ts; a keyword count series is backtested with velocity.ts).
 */
import { absolutePermalink, EventKindDefinition, EVIDENCE_FIELDS, field, fixed, iso, lift, minutes, percent, round, round6, TrendEvidence } from '../kind';

/** What the velocity detector reports for a story: its lead keyword, judged over the window ending when it fired. */
export interface VelocityDetection {
  readonly kind: 'trends.velocity';
  readonly keyword: string;
  readonly bucketStart: number;
  readonly bucketEnd: number;
  /** Creation time of the story's first post: the earliest post in the window carrying `keyword` (ms). */
  readonly firstPostAt: number;
  /** The story's keywords: `keyword` first, then the others that fired in the same posts, by score. */
  readonly keywords: readonly string[];
  /** Independent posts in the window containing the keyword (one per known author, one per distinct title of unknown authors). */
  readonly count: number;
  /** Independent posts in the window. */
  readonly posts: number;
  /** Distinct known authors of the posts containing the keyword (0 when no author is known). */
  readonly distinctAuthors: number;
  /** count / posts. */
  readonly share: number;
  /** Share the score was measured against: the keyword's usual share (its decayed history), floored at `priorShare`. */
  readonly baselineShare: number;
  /** ≈ z-score: signed root of the deviance of count against posts × baselineShare, over the dispersion. */
  readonly score: number;
  readonly threshold: number;
  /** Fewest distinct authors (or, for a count series, posts) with the keyword that may fire. */
  readonly minCount: number;
  /** Up to `maxEvidence` ids of posts containing the keyword, in input order. */
  readonly postIds: readonly string[];
  readonly permalinks: readonly string[];
}

/** `trends.velocity`: a new subject that many distinct authors post about within the hour. */
export interface VelocityEventData extends TrendEvidence {
  /** The keyword, lower-cased and lightly stemmed (`movies` → `movy`); a ticker without its `$`. The story's highest-scoring keyword. */
  keyword: string;
  /** Every keyword of the story: `keyword` first, then the others that spiked in the same posts (`josh`, `brown`). */
  keywords: string[];
  /** Posts in the window (the hour up to `window_end`) containing the keyword (= `observed`), counted independently: a known author's posts count once, and so do reposts of one title by unknown authors. */
  count: number;
  /** All posts of the subreddit in the window, counted the same way. */
  posts: number;
  /** Distinct known authors of the posts containing the keyword; 0 when no author is known (deleted accounts), where distinct titles were counted instead. */
  distinct_authors: number;
  /** When the story's first post in the window was created: the event's delay is `window_end` minus this. */
  first_post_at: string;
  /** count / posts. */
  share: number;
  /** The keyword's usual share (floored at the detector's prior); `expected` = posts × baseline_share. */
  baseline_share: number;
  /** ≈ z-score: signed root of the deviance of count against expected, over the dispersion (which grows with expected, so everyday words need far more). */
  score: number;
  /** Fewest distinct authors with the keyword that may fire at all. */
  min_count: number;
  /** Ids of up to 10 posts of the window containing the keyword (a sample, in post order). */
  post_ids: string[];
  /** Their absolute reddit.com permalinks, in the same order. */
  permalinks: string[];
}

export const VELOCITY: EventKindDefinition<'trends.velocity', VelocityDetection, VelocityEventData> = {
  kind: 'trends.velocity',
  summary: 'A new subject that many distinct authors post about within the hour, reported as soon as they do.',
  fields: {
    ...EVIDENCE_FIELDS,
    keyword: field('string', "The keyword, lower-cased and lightly stemmed (a ticker without its `$`): the story's highest-scoring keyword."),
    keywords: field('string[]', 'Every keyword of the story, `keyword` first, then the others that spiked in the same posts.'),
    count: field('integer', "Posts in the window (the hour up to window_end) containing the keyword (= observed); a known author's posts count once, and so do reposts of one title by unknown authors."),
    posts: field('integer', 'All posts of the subreddit in the window, counted the same way.'),
    distinct_authors: field('integer', 'Distinct known authors of the posts containing the keyword; 0 when no author is known (deleted accounts), where distinct titles were counted instead.'),
    first_post_at: field('date-time', "When the story's first post in the window was created (the earliest post carrying `keyword`): the event came `window_end − first_post_at` after it."),
    share: field('number', 'count / posts.'),
    baseline_share: field('number', "The keyword's usual share; expected = posts × baseline_share."),
    score: field('number', "≈ z-score: signed root of the Poisson deviance of count against expected, over the dispersion (larger for everyday words)."),
    min_count: field('integer', 'Fewest distinct authors with the keyword that may fire at all.'),
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
      window_start: '2026-03-03T07:30:00.000Z',
      window_end: '2026-03-03T08:30:00.000Z',
      observed: 14,
      expected: 0.066,
      lift: 212.121,
      threshold: 4.5,
      keyword: 'eclipse',
      keywords: ['eclipse', 'totality'],
      count: 14,
      posts: 33,
      distinct_authors: 12,
      first_post_at: '2026-03-03T07:41:12.000Z',
      share: 0.424242,
      baseline_share: 0.002,
      score: 9.3,
      min_count: 5,
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
      first_post_at: iso(d.firstPostAt),
      share: round6(d.share),
      baseline_share: round6(d.baselineShare),
      score: round(d.score),
      min_count: d.minCount,
      post_ids: [...d.postIds],
      permalinks: d.permalinks.map(absolutePermalink),
    };
  },
  // One story, one key: its lead keyword and its first post (concurrent stories differ in one or the other).
  identity: (d) => ({ windowStartMs: d.firstPostAt, discriminator: d.keyword, createdAtMs: d.bucketEnd }),
  visibleAt: 'window_end',
  describe: (data) =>
    // Events stored before `keywords` existed have `keyword` alone.
    `"${Array.isArray(data.keywords) ? data.keywords.join(' + ') : data.keyword}" in ${data.count} of ${data.posts} posts in ${minutes(data.window_start, data.window_end)} (${percent(data.share)} vs ${percent(data.baseline_share)} usual, score ${fixed(data.score)})` +
    // Events stored before `first_post_at` existed have no delay to show.
    (typeof data.first_post_at === 'string' ? `, ${minutes(data.first_post_at, data.window_end)} after its first post` : ''),
};
