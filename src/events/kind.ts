/**
 * What one event kind is made of, and what every kind shares: the evidence fields and the fields
 * the delivery layer adds. A kind file (kinds/*.ts) fills in an `EventKindDefinition`; the
 * catalogue collects them. Nothing here knows a particular kind.
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

/** What the delivery layer adds to every event's data. */
export interface DeliveredEventFields {
  event_id: string;
  webhook_id: string;
  subreddit: string;
  /** Present (and true) only on a test event: one its owner asked for, whose figures are the kind's example. */
  test?: true;
}

export type FieldType = 'string' | 'number' | 'integer' | 'boolean' | 'date-time' | 'string[]';

export interface FieldSpec {
  type: FieldType;
  description: string;
  /** The only value the field ever has (JSON Schema `const`). */
  const?: string | number | boolean;
  /** Absent from some bodies (not in the schema's `required`). */
  optional?: true;
}

/** A received body's `data`: read defensively, since the demo prints whatever arrived. */
export type ReceivedData = Readonly<Record<string, unknown>>;

/**
 * One event kind, defined once: its name, the detection its detector produces (`D`), its `data`
 * payload (`P`), how the one becomes the other, and how it is documented and printed.
 */
export interface EventKindDefinition<K extends string, D extends { readonly kind: K }, P extends TrendEvidence> {
  readonly kind: K;
  /** One sentence: what the kind means (OpenAPI summary and description). */
  readonly summary: string;
  /** Each `data` field's type and meaning; keyed by the payload, so a missed or unknown field does not compile. */
  readonly fields: Readonly<Record<keyof P, FieldSpec>>;
  readonly example: { type: K; timestamp: string; data: P & DeliveredEventFields };
  /** The detection's evidence as the snake_case `data` a receiver gets. */
  toData(d: D): P;
  /**
   * What identifies the detection (the event key's window start and discriminator: a replay yields
   * the same event id) and when its event was created (ms since epoch).
   */
  identity(d: D): { windowStartMs: number; discriminator: string; createdAtMs: number };
  /** The `data` field holding when the trend became visible, for the demo's timestamp. */
  readonly visibleAt: keyof P & string;
  /** The key figures in one line, e.g. `27 posts in 5 min vs 5.0 expected (z=9.6)`. */
  describe(data: ReceivedData): string;
}

export const field = (type: FieldType, description: string): FieldSpec => ({ type, description });

export const DELIVERED_FIELDS: Readonly<Record<keyof DeliveredEventFields, FieldSpec>> = {
  event_id: field('string', "The event (`evt_…`, a test event's `evt_test_…`); one event fanned out to several webhooks keeps its id."),
  webhook_id: field('string', 'The webhook this delivery is for (ULID).'),
  subreddit: field('string', 'The subreddit, lower case, without `r/`.'),
  test: {
    ...field(
      'boolean',
      "Only on a test event (`POST /v1/webhooks/{webhook_id}/test`), and then `true`: the figures are the kind's documented example and report no trend. Absent on every real event.",
    ),
    const: true,
    optional: true,
  },
};

export const EVIDENCE_FIELDS: Readonly<Record<keyof TrendEvidence, FieldSpec>> = {
  window_start: field('date-time', 'Start (inclusive) of the time the figures were measured over.'),
  window_end: field('date-time', 'End (exclusive) of that time: when the trend became visible.'),
  observed: field('number', "What was seen in the window, in the kind's unit."),
  expected: field('number', "What the detector's baseline expected in the same window and unit."),
  lift: field('number', 'observed / expected: how many times the usual figure.'),
  threshold: field('number', "The detector's threshold that its score reached."),
};

// Payload figures.

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** observed / expected; an expectation below 1e-3 (in the kind's unit) counts as 1e-3, so lift stays finite. */
export function lift(observed: number, expected: number): number {
  return round(observed / Math.max(expected, 1e-3));
}

export function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

export function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

export function absolutePermalink(p: string): string {
  return p.startsWith('/') ? `https://www.reddit.com${p}` : p;
}

// One-line formatting of received figures: a missing or malformed figure prints as `?`.

export const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : NaN);

export function fixed(v: unknown, digits = 1): string {
  const n = num(v);
  return Number.isNaN(n) ? '?' : n.toFixed(digits);
}

export function percent(v: unknown): string {
  const n = num(v) * 100;
  if (Number.isNaN(n)) return '?';
  return n >= 10 ? `${Math.round(n)}%` : `${n.toFixed(1)}%`;
}

export function minutes(startIso: unknown, endIso: unknown): string {
  const ms = Date.parse(String(endIso)) - Date.parse(String(startIso));
  return Number.isFinite(ms) ? `${Math.round(ms / 60_000)} min` : '? min';
}

export function ellipsis(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}
