/** `trends.rising`: a young post gains score and comments far faster than usual (detector: src/trends/detectors/rising.ts). */
import { absolutePermalink, ellipsis, EventKindDefinition, EVIDENCE_FIELDS, field, fixed, iso, lift, num, round, TrendEvidence } from '../kind';

/** What the rising detector reports when a re-read of a young post fires. */
export interface RisingDetection {
  readonly kind: 'trends.rising';
  readonly postId: string;
  readonly permalink: string;
  readonly title: string;
  readonly createdUtcMs: number;
  readonly ageMinutes: number;
  readonly scorePerHour: number;
  readonly commentsPerHour: number;
  /** scorePerHour + commentWeight · commentsPerHour. */
  readonly growthPerHour: number;
  /** The subreddit's typical growth per hour (same units as growthPerHour). */
  readonly baselinePerHour: number;
  /** (log growth − median log growth) / (upper quantile − median): the robust z-score that fired. */
  readonly zScore: number;
  readonly threshold: number;
  /** The post's score at this observation. */
  readonly score: number;
  readonly numComments: number;
  /** The earlier observation the rate was measured from (ms since epoch): the rate's window starts here. */
  readonly sinceMs: number;
  readonly observedAt: number;
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

export const RISING: EventKindDefinition<'trends.rising', RisingDetection, RisingEventData> = {
  kind: 'trends.rising',
  summary: "A young post gains score and comments far faster than the subreddit's norm.",
  fields: {
    ...EVIDENCE_FIELDS,
    post_id: field('string', 'The post (Reddit id without prefix).'),
    permalink: field('string', 'Its absolute reddit.com permalink.'),
    title: field('string', "The post's title."),
    created_at: field('date-time', 'When the post was created.'),
    age_minutes: field('number', 'Age of the post at observed_at, in minutes.'),
    score: field('integer', "The post's Reddit score at observed_at."),
    num_comments: field('integer', 'Its comments at observed_at.'),
    score_gained: field('number', 'Score points gained in the window.'),
    comments_gained: field('number', 'Comments gained in the window.'),
    score_per_hour: field('number', 'Score points per hour in the window.'),
    comments_per_hour: field('number', 'Comments per hour in the window.'),
    growth_per_hour: field('number', 'score_per_hour + 2 · comments_per_hour (= observed).'),
    baseline_per_hour: field('number', "The subreddit's median growth of young posts (= expected)."),
    z_score: field('number', "The detector's score that reached threshold."),
    observed_at: field('date-time', 'The re-read that fired (= window_end).'),
  },
  example: {
    type: 'trends.rising',
    timestamp: '2026-03-03T11:30:00.000Z',
    data: {
      event_id: 'evt_01KJSX4M8G0000000000000004',
      webhook_id: '01KJSX4M8G0000000000000005',
      subreddit: 'demo',
      window_start: '2026-03-03T11:15:00.000Z',
      window_end: '2026-03-03T11:30:00.000Z',
      observed: 1764,
      expected: 22,
      lift: 80.182,
      threshold: 4,
      post_id: '1b2c3d5',
      permalink: 'https://www.reddit.com/r/demo/comments/1b2c3d5/',
      title: 'Caught the ISS crossing the face of the Sun in one frame',
      created_at: '2026-03-03T11:03:00.000Z',
      age_minutes: 27,
      score: 812,
      num_comments: 96,
      score_gained: 380,
      comments_gained: 31,
      score_per_hour: 1520,
      comments_per_hour: 124,
      growth_per_hour: 1768,
      baseline_per_hour: 22,
      z_score: 8.1,
      observed_at: '2026-03-03T11:30:00.000Z',
    },
  },
  toData: (d) => {
    const hours = (d.observedAt - d.sinceMs) / 3600_000;
    return {
      window_start: iso(d.sinceMs),
      window_end: iso(d.observedAt),
      observed: round(d.growthPerHour),
      expected: round(d.baselinePerHour),
      lift: lift(d.growthPerHour, d.baselinePerHour),
      threshold: d.threshold,
      post_id: d.postId,
      permalink: absolutePermalink(d.permalink),
      title: d.title,
      created_at: iso(d.createdUtcMs),
      age_minutes: round(d.ageMinutes),
      score: d.score,
      num_comments: d.numComments,
      score_gained: Math.round(d.scorePerHour * hours),
      comments_gained: Math.round(d.commentsPerHour * hours),
      score_per_hour: round(d.scorePerHour),
      comments_per_hour: round(d.commentsPerHour),
      growth_per_hour: round(d.growthPerHour),
      baseline_per_hour: round(d.baselinePerHour),
      z_score: round(d.zScore),
      observed_at: iso(d.observedAt),
    };
  },
  // Keyed by the post, not the re-read: whichever re-read fires, the post is announced once.
  identity: (d) => ({ windowStartMs: d.createdUtcMs, discriminator: d.postId, createdAtMs: d.observedAt }),
  visibleAt: 'observed_at',
  describe: (data) =>
    `"${ellipsis(String(data.title), 48)}" +${Math.round(num(data.growth_per_hour))}/h at ${data.age_minutes} min old (usual ${fixed(data.baseline_per_hour)}/h, z=${fixed(data.z_score)})`,
};
