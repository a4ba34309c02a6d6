import type { DeliveredEventFields, DeliveredTrendEvent, RisingEventData, SurgeEventData, TrendEventDataByKind, VelocityEventData } from './trend-event-payloads';

/**
 * The event catalogue: one definition per trend kind — what it means, each `data` field with its
 * type and meaning, and an example body — from which the OpenAPI document's `webhooks` section is
 * derived. The field maps are keyed by the payload interfaces (trend-event-payloads.ts), so the
 * compiler refuses a catalogue that misses a field or names one that does not exist.
 */
export type FieldType = 'string' | 'number' | 'integer' | 'boolean' | 'date-time' | 'string[]';

export interface FieldSpec {
  type: FieldType;
  description: string;
}

export interface EventKindSpec<K extends keyof TrendEventDataByKind> {
  summary: string;
  fields: Record<keyof TrendEventDataByKind[K], FieldSpec>;
  example: { type: K; timestamp: string; data: DeliveredTrendEvent<K> };
}

const f = (type: FieldType, description: string): FieldSpec => ({ type, description });

const DELIVERED: Record<keyof DeliveredEventFields, FieldSpec> = {
  event_id: f('string', 'The event (`evt_…`); one event fanned out to several webhooks keeps its id.'),
  webhook_id: f('string', 'The webhook this delivery is for (ULID).'),
  subreddit: f('string', 'The subreddit, lower case, without `r/`.'),
};

const EVIDENCE = {
  window_start: f('date-time', 'Start (inclusive) of the time the figures were measured over.'),
  window_end: f('date-time', 'End (exclusive) of that time: when the trend became visible.'),
  observed: f('number', "What was seen in the window, in the kind's unit."),
  expected: f('number', "What the detector's baseline expected in the same window and unit."),
  lift: f('number', 'observed / expected: how many times the usual figure.'),
  threshold: f('number', "The detector's threshold that its score reached."),
};

const SURGE: EventKindSpec<'trends.surge'> = {
  summary: 'The subreddit posts far more than usual.',
  fields: {
    ...EVIDENCE,
    count: f('integer', 'Posts in the window (= observed).'),
    baseline: f('number', 'Posts the model expected in the window (= expected).'),
    stddev: f('number', 'The spread under which `score` reads as a z-score.'),
    score: f('number', 'The detector score that reached `threshold`.'),
    window_buckets: f('integer', 'Five-minute buckets in the scored window.'),
    seasonal: f('boolean', 'Whether the hour-of-day pattern was part of `baseline`.'),
  } satisfies Record<keyof SurgeEventData, FieldSpec>,
  example: {
    type: 'trends.surge',
    timestamp: '2026-03-03T13:05:00.000Z',
    data: {
      event_id: 'evt_01KJSX4M8G0000000000000000',
      webhook_id: '01KJSX4M8G0000000000000001',
      subreddit: 'demo',
      window_start: '2026-03-03T11:05:00.000Z',
      window_end: '2026-03-03T13:05:00.000Z',
      observed: 27,
      expected: 5,
      lift: 5.4,
      threshold: 4,
      count: 27,
      baseline: 5,
      stddev: 2.292,
      score: 9.6,
      window_buckets: 24,
      seasonal: true,
    },
  },
};

const VELOCITY: EventKindSpec<'trends.velocity'> = {
  summary: "One keyword's share of the subreddit's posts spikes.",
  fields: {
    ...EVIDENCE,
    keyword: f('string', 'The keyword, lower-cased and lightly stemmed.'),
    count: f('integer', 'Posts in the window containing the keyword (= observed).'),
    posts: f('integer', 'All posts of the subreddit in the window.'),
    share: f('number', 'count / posts.'),
    baseline_share: f('number', "The keyword's usual share; expected = posts × baseline_share."),
    score: f('number', 'Signed root of the binomial deviance over the dispersion (≈ z-score).'),
    min_count: f('integer', 'Fewest posts with the keyword that may fire at all.'),
    post_ids: f('string[]', 'Ids of up to 10 posts of the window containing the keyword.'),
    permalinks: f('string[]', 'Their absolute reddit.com permalinks, in the same order.'),
  } satisfies Record<keyof VelocityEventData, FieldSpec>,
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
};

const RISING: EventKindSpec<'trends.rising'> = {
  summary: "A young post gains score and comments far faster than the subreddit's norm.",
  fields: {
    ...EVIDENCE,
    post_id: f('string', 'The post (Reddit id without prefix).'),
    permalink: f('string', 'Its absolute reddit.com permalink.'),
    title: f('string', "The post's title."),
    created_at: f('date-time', 'When the post was created.'),
    age_minutes: f('number', 'Age of the post at observed_at, in minutes.'),
    score: f('integer', "The post's Reddit score at observed_at."),
    num_comments: f('integer', 'Its comments at observed_at.'),
    score_gained: f('number', 'Score points gained in the window.'),
    comments_gained: f('number', 'Comments gained in the window.'),
    score_per_hour: f('number', 'Score points per hour in the window.'),
    comments_per_hour: f('number', 'Comments per hour in the window.'),
    growth_per_hour: f('number', 'score_per_hour + 2 · comments_per_hour (= observed).'),
    baseline_per_hour: f('number', "The subreddit's median growth of young posts (= expected)."),
    z_score: f('number', "The detector's score that reached threshold."),
    observed_at: f('date-time', 'The re-read that fired (= window_end).'),
  } satisfies Record<keyof RisingEventData, FieldSpec>,
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
};

export const EVENT_KINDS: { [K in keyof TrendEventDataByKind]: EventKindSpec<K> } = {
  'trends.surge': SURGE,
  'trends.velocity': VELOCITY,
  'trends.rising': RISING,
};

function fieldSchema(spec: FieldSpec): Record<string, unknown> {
  const base =
    spec.type === 'date-time' ? { type: 'string', format: 'date-time' } : spec.type === 'string[]' ? { type: 'array', items: { type: 'string' } } : { type: spec.type };
  return { ...base, description: spec.description };
}

/** The JSON Schema of one kind's delivery body `{type, timestamp, data}`. */
export function eventBodySchema(kind: keyof TrendEventDataByKind): Record<string, unknown> {
  const fields: Record<string, FieldSpec> = { ...DELIVERED, ...EVENT_KINDS[kind].fields };
  return {
    type: 'object',
    description: EVENT_KINDS[kind].summary,
    required: ['type', 'timestamp', 'data'],
    additionalProperties: false,
    properties: {
      type: { type: 'string', const: kind },
      timestamp: { type: 'string', format: 'date-time', description: 'When the event was created.' },
      data: {
        type: 'object',
        required: Object.keys(fields),
        additionalProperties: false,
        properties: Object.fromEntries(Object.entries(fields).map(([name, spec]) => [name, fieldSchema(spec)])),
      },
    },
    example: EVENT_KINDS[kind].example,
  };
}
