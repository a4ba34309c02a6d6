import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { EVENT_CATALOGUE, EVENT_KINDS, eventBodySchema, exampleFigures, figuresProblem, isEventKind, isTestEventId } from './catalogue';

describe('event catalogue', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);

  it('lists each kind once, under its own name, in catalogue order', () => {
    expect(Object.keys(EVENT_CATALOGUE)).toEqual([...EVENT_KINDS]);
    expect(new Set(EVENT_KINDS).size).toBe(EVENT_KINDS.length);
    for (const kind of EVENT_KINDS) expect(EVENT_CATALOGUE[kind].kind).toBe(kind);
  });

  it('knows its kinds and nothing else', () => {
    for (const kind of EVENT_KINDS) expect(isEventKind(kind)).toBe(true);
    for (const other of ['trends.other', 'toString', '__proto__', '', 42, undefined]) expect(isEventKind(other)).toBe(false);
  });

  it.each([...EVENT_KINDS])('%s: its example carries the kind and every documented field', (kind) => {
    const { example, fields } = EVENT_CATALOGUE[kind];
    expect(example.type).toBe(kind);
    expect(Object.keys(example.data).sort()).toEqual(['event_id', 'subreddit', 'webhook_id', ...Object.keys(fields)].sort());
    expect(example.data[EVENT_CATALOGUE[kind].visibleAt as keyof typeof example.data]).toBe(example.timestamp);
  });

  it.each([...EVENT_KINDS])('%s: its one-line description of its example has no unknown figure', (kind) => {
    const line = EVENT_CATALOGUE[kind].describe(EVENT_CATALOGUE[kind].example.data as unknown as Record<string, unknown>);
    expect(line).not.toMatch(/\?|undefined|NaN/);
  });

  it.each([...EVENT_KINDS])('%s: its example is a valid body of its own schema, and not of the others', (kind) => {
    const { example, ...schema } = eventBodySchema(kind);
    expect(ajv.validate(schema, example)).toBe(true);
    expect(ajv.errors ?? null).toBeNull();
    for (const other of EVENT_KINDS.filter((k) => k !== kind)) {
      const { example: _unused, ...otherSchema } = eventBodySchema(other);
      expect(ajv.validate(otherSchema, example)).toBe(false);
    }
  });

  it('requires every field of data, so a payload that drops one fails', () => {
    const { example, ...schema } = eventBodySchema('trends.surge');
    const body = structuredClone(example) as { data: Record<string, unknown> };
    delete body.data.lift;
    expect(ajv.validate(schema, body)).toBe(false);
    expect(ajv.errorsText()).toContain("must have required property 'lift'");
  });

  it.each([...EVENT_KINDS])('%s: documents the test mark as optional and only true, so a test body of the example is valid and a real one needs no mark', (kind) => {
    const { example: _unused, ...schema } = eventBodySchema(kind);
    const example = EVENT_CATALOGUE[kind].example;
    const test = { ...example, data: { ...example.data, event_id: 'evt_test_01KJSX4M8G0000000000000002', test: true } };
    expect(ajv.validate(schema, test)).toBe(true);
    expect(ajv.validate(schema, example)).toBe(true);
    expect(ajv.validate(schema, { ...test, data: { ...test.data, test: false } })).toBe(false);
    expect(ajv.validate(schema, { ...test, data: { ...test.data, test: 'true' } })).toBe(false);
    const data = (schema.properties as { data: { required: string[]; properties: Record<string, unknown> } }).data;
    expect(data.required).not.toContain('test');
    expect(data.properties.test).toMatchObject({ type: 'boolean', const: true });
  });

  it('tells a test event by its evt_test_ id, and nothing else', () => {
    expect(isTestEventId('evt_test_01KJSX4M8G0000000000000002')).toBe(true);
    for (const id of ['evt_01KJSX4M8G0000000000000002', 'evt_testing', 'evt_Test_01KJSX4M8G0000000000000002', 'test_evt_1', '']) expect(isTestEventId(id)).toBe(false);
  });

  describe('figuresProblem (what `events emit` checks before it emits)', () => {
    /** The body those figures make, judged by the kind's published schema. */
    const schemaAccepts = (kind: (typeof EVENT_KINDS)[number], figures: Record<string, unknown>) => {
      const { example: _unused, ...schema } = eventBodySchema(kind);
      return ajv.validate(schema, { type: kind, timestamp: '2026-03-03T13:05:00.000Z', data: { event_id: 'evt_1', webhook_id: '01KJSX4M8G0000000000000001', subreddit: 'demo', ...figures } });
    };
    const SPACE_SPELLED = new Set<unknown>(['2026-03-03 13:05:00Z']);
    const WRONG = [null, 'text', 1.5, 7, -2, true, [], ['a'], [1], {}, '2026-03-03T13:05:00Z', '2026-03-03', 'yesterday', '2026-02-30T10:00:00.000Z', '2024-02-29T23:59:59+01:00', '2026-03-03T24:00:00Z', '2026-13-01T00:00:00Z', '2026-03-03T13:05:00.000+25:00', '2026-03-03 13:05:00Z'];

    it.each([...EVENT_KINDS])('%s: agrees with the schema on the example, on each field dropped, and on each field given a value of every type', (kind) => {
      const example = exampleFigures(kind);
      expect(figuresProblem(kind, example)).toBeUndefined();
      expect(schemaAccepts(kind, example)).toBe(true);
      for (const name of Object.keys(example)) {
        const { [name]: _dropped, ...rest } = example;
        expect({ name, problem: figuresProblem(kind, rest) }).toEqual({ name, problem: { problem: 'missing', fields: [name] } });
        expect(schemaAccepts(kind, rest)).toBe(false);
        for (const value of WRONG) {
          const figures = { ...example, [name]: value };
          const problem = figuresProblem(kind, figures);
          const accepted = schemaAccepts(kind, figures);
          // Never looser than the schema; stricter only on a date-time spelt with a space for the T (RFC 3339 allows it, not every parser does).
          if (problem === undefined || !SPACE_SPELLED.has(value)) expect({ name, value, checker: problem === undefined }).toEqual({ name, value, checker: accepted });
          if (problem) expect(problem).toMatchObject({ problem: 'type', field: name });
        }
      }
    });

    it('names a field the kind does not have, and a field the delivery fills in', () => {
      expect(figuresProblem('trends.surge', { ...exampleFigures('trends.surge'), subreddit_rank: 1 })).toEqual({ problem: 'unknown', field: 'subreddit_rank' });
      expect(figuresProblem('trends.surge', { subreddit: 'x' })).toEqual({ problem: 'reserved', field: 'subreddit' });
      expect(figuresProblem('trends.surge', { ...exampleFigures('trends.surge'), test: true })).toEqual({ problem: 'reserved', field: 'test' });
      expect(figuresProblem('trends.surge', { ['__proto__']: 1 })).toEqual({ problem: 'unknown', field: '__proto__' });
    });

    it('lists every missing field at once, in the order the schema lists them', () => {
      const problem = figuresProblem('trends.surge', { count: 42 });
      expect(problem).toEqual({ problem: 'missing', fields: Object.keys(EVENT_CATALOGUE['trends.surge'].fields).filter((f) => f !== 'count') });
    });
  });
});
