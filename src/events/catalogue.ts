/**
 * The event catalogue: every event kind, each defined once in its own file under kinds/ (name,
 * detection, typed `data`, the detection → data mapping, OpenAPI fields and example, one-line
 * format). Everything that lists or handles kinds — webhook validation, delivery, the trend
 * pipeline, the OpenAPI document, the demo and the CLI — derives from `EVENT_CATALOGUE`, so a new
 * kind is its kind file, its import and `DEFINITIONS` entry here, and the detector that produces it.
 *
 * This folder sits below trends, webhooks, delivery, openapi, demo and the CLI and imports none of them.
 */
import type { DeliveredEventFields, EventKindDefinition, FieldSpec, FieldType } from './kind';
import { DELIVERED_FIELDS } from './kind';
import { RISING } from './kinds/rising';
import { SURGE } from './kinds/surge';
import { VELOCITY } from './kinds/velocity';

export type { DeliveredEventFields, FieldSpec, FieldType, ReceivedData, TrendEvidence } from './kind';
export type { RisingDetection, RisingEventData } from './kinds/rising';
export type { SurgeDetection, SurgeEventData } from './kinds/surge';
export type { VelocityDetection, VelocityEventData } from './kinds/velocity';
export { isTestEventId, TEST_EVENT_ID_PREFIX } from './test-event';

/** In the order webhooks list and the documents show them. */
const DEFINITIONS = [SURGE, VELOCITY, RISING] as const;

type AnyDefinition = (typeof DEFINITIONS)[number];

/** `trends.surge`, …: what webhooks subscribe to and events carry as `type`. */
export type EventKind = AnyDefinition['kind'];

/** The definition of one kind, with its detection and payload types. */
export type EventKindOf<K extends EventKind> = Extract<AnyDefinition, { kind: K }>;

/** Any detector's output. */
export type Detection = Parameters<AnyDefinition['toData']>[0];

/** Each kind's `data`, by kind. */
export type TrendEventDataByKind = { [K in EventKind]: ReturnType<EventKindOf<K>['toData']> };

export type TrendEventData = TrendEventDataByKind[EventKind];

/** A trend event's `data` as a receiver sees it. */
export type DeliveredTrendEvent<K extends EventKind = EventKind> = TrendEventDataByKind[K] & DeliveredEventFields;

export const EVENT_CATALOGUE: { readonly [K in EventKind]: EventKindOf<K> } = Object.freeze(
  Object.fromEntries(DEFINITIONS.map((d) => [d.kind, d])) as { [K in EventKind]: EventKindOf<K> },
);

/** The kind names, in catalogue order. */
export const EVENT_KINDS: readonly EventKind[] = Object.freeze(DEFINITIONS.map((d) => d.kind));

export function isEventKind(value: unknown): value is EventKind {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(EVENT_CATALOGUE, value);
}

/**
 * The definition a detection belongs to, typed for that detection. (Indexing the catalogue by a
 * union kind gives a union of definitions whose functions cannot be called with the union.)
 */
export function definitionOf<D extends Detection>(d: D): EventKindDefinition<D['kind'], D, TrendEventDataByKind[D['kind']]> {
  return EVENT_CATALOGUE[d.kind] as unknown as EventKindDefinition<D['kind'], D, TrendEventDataByKind[D['kind']]>;
}

function fieldSchema(spec: FieldSpec): Record<string, unknown> {
  const base =
    spec.type === 'date-time' ? { type: 'string', format: 'date-time' } : spec.type === 'string[]' ? { type: 'array', items: { type: 'string' } } : { type: spec.type };
  return { ...base, ...(spec.const === undefined ? {} : { const: spec.const }), description: spec.description };
}

/** A delivery body `{type, timestamp, data}` whose data is the delivered fields and `fields`, nothing else. */
function bodySchema(type: string, summary: string, own: Readonly<Record<string, FieldSpec>>, example: unknown): Record<string, unknown> {
  const fields: Record<string, FieldSpec> = { ...DELIVERED_FIELDS, ...own };
  const required = Object.keys(fields).filter((name) => !fields[name].optional);
  return {
    type: 'object',
    description: summary,
    required: ['type', 'timestamp', 'data'],
    additionalProperties: false,
    properties: {
      type: { type: 'string', const: type },
      timestamp: { type: 'string', format: 'date-time', description: 'When the event was created.' },
      data: {
        type: 'object',
        required,
        additionalProperties: false,
        properties: Object.fromEntries(Object.entries(fields).map(([name, spec]) => [name, fieldSchema(spec)])),
      },
    },
    example,
  };
}

/** The JSON Schema of one kind's delivery body `{type, timestamp, data}`. */
export function eventBodySchema(kind: EventKind): Record<string, unknown> {
  const def = EVENT_CATALOGUE[kind];
  return bodySchema(kind, def.summary, def.fields, def.example);
}

/** What is wrong with an event's figures (its `data` less the delivered fields), judged as the published schema will judge the body. */
export type FiguresProblem =
  /** A field the delivery layer fills in (`event_id`, `webhook_id`, `subreddit`, `test`). */
  | { problem: 'reserved'; field: keyof DeliveredEventFields }
  | { problem: 'unknown'; field: string }
  /** `expected`: e.g. "an integer", "true". */
  | { problem: 'type'; field: string; expected: string }
  | { problem: 'missing'; fields: string[] };

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/;

/** RFC 3339 `date-time` (JSON Schema's format) with a real calendar day: Date.parse takes 2026-02-30 for March 2nd. */
function isDateTime(v: unknown): boolean {
  const m = typeof v === 'string' ? ISO_DATE_TIME.exec(v) : null;
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const offsetOk = m[8] === 'Z' || (Number(m[9]) <= 23 && Number(m[10]) <= 59);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59 && offsetOk;
}

const TYPE_CHECKS: Record<FieldType, { test: (v: unknown) => boolean; expected: string }> = {
  string: { test: (v) => typeof v === 'string', expected: 'a string' },
  number: { test: (v) => typeof v === 'number' && Number.isFinite(v), expected: 'a number' },
  integer: { test: (v) => Number.isInteger(v), expected: 'an integer' },
  boolean: { test: (v) => typeof v === 'boolean', expected: 'a boolean' },
  'date-time': {
    test: isDateTime,
    expected: 'an ISO 8601 date-time such as 2026-03-03T13:05:00.000Z',
  },
  'string[]': { test: (v) => Array.isArray(v) && v.every((x) => typeof x === 'string'), expected: 'an array of strings' },
};

/**
 * The first problem of `figures` as the figures of an event of `kind`, or undefined when they make a
 * body that openapi.json's schema of the kind accepts: every field of the kind, each of its type,
 * nothing else. Names before values (a misspelt name explains a missing one), then every missing field at once.
 */
export function figuresProblem(kind: EventKind, figures: Readonly<Record<string, unknown>>): FiguresProblem | undefined {
  const fields: Readonly<Record<string, FieldSpec>> = EVENT_CATALOGUE[kind].fields;
  for (const name of Object.keys(figures)) {
    if (Object.prototype.hasOwnProperty.call(DELIVERED_FIELDS, name)) return { problem: 'reserved', field: name as keyof DeliveredEventFields };
    if (!Object.prototype.hasOwnProperty.call(fields, name)) return { problem: 'unknown', field: name };
  }
  for (const [name, value] of Object.entries(figures)) {
    const spec = fields[name];
    if (spec.const !== undefined && value !== spec.const) return { problem: 'type', field: name, expected: JSON.stringify(spec.const) };
    if (!TYPE_CHECKS[spec.type].test(value)) return { problem: 'type', field: name, expected: TYPE_CHECKS[spec.type].expected };
  }
  const missing = Object.keys(fields).filter((name) => !Object.prototype.hasOwnProperty.call(figures, name));
  return missing.length > 0 ? { problem: 'missing', fields: missing } : undefined;
}

/** A kind's documented example figures: its example's `data` without the fields the delivery layer fills in. */
export function exampleFigures(kind: EventKind): Record<string, unknown> {
  const figures: Record<string, unknown> = { ...EVENT_CATALOGUE[kind].example.data };
  for (const name of Object.keys(DELIVERED_FIELDS)) delete figures[name];
  return figures;
}
