/**
 * The event catalogue: every event kind, each defined once in its own file under kinds/ (name,
 * detection, typed `data`, the detection → data mapping, OpenAPI fields and example, one-line
 * format). Everything that lists or handles kinds — webhook validation, delivery, the trend
 * pipeline, the OpenAPI document, the demo and the CLI — derives from `EVENT_CATALOGUE`, so a new
 * kind is its kind file, its import and `DEFINITIONS` entry here, and the detector that produces it.
 *
 * This folder sits below trends, webhooks, delivery, openapi, demo and the CLI and imports none of them.
 */
import type { DeliveredEventFields, EventKindDefinition, FieldSpec } from './kind';
import { DELIVERED_FIELDS } from './kind';
import { RISING } from './kinds/rising';
import { SURGE } from './kinds/surge';
import { VELOCITY } from './kinds/velocity';
import { TEST_EVENT } from './test-event';

export type { DeliveredEventFields, FieldSpec, FieldType, ReceivedData, TrendEvidence } from './kind';
export type { RisingDetection, RisingEventData } from './kinds/rising';
export type { SurgeDetection, SurgeEventData } from './kinds/surge';
export type { VelocityDetection, VelocityEventData } from './kinds/velocity';
export { TEST_EVENT, TEST_EVENT_DATA, TEST_EVENT_TYPE } from './test-event';
export type { TestEventData } from './test-event';

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
        required: Object.keys(fields),
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

/** The JSON Schema of a `webhook.test` delivery body. */
export function testEventBodySchema(): Record<string, unknown> {
  return bodySchema(TEST_EVENT.type, TEST_EVENT.summary, TEST_EVENT.fields, TEST_EVENT.example);
}
