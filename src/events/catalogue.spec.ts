import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { EVENT_CATALOGUE, EVENT_KINDS, eventBodySchema, isEventKind, TEST_EVENT, TEST_EVENT_DATA, testEventBodySchema } from './catalogue';

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

  it('documents the test event: its example and what it sends are valid bodies of its schema, and no trend body is', () => {
    const { example, ...schema } = testEventBodySchema();
    expect(ajv.validate(schema, example)).toBe(true);
    const sent = { type: TEST_EVENT.type, timestamp: new Date().toISOString(), data: { event_id: 'evt_1', webhook_id: '01KJSX4M8G0000000000000001', subreddit: 'demo', ...TEST_EVENT_DATA } };
    expect(ajv.validate(schema, sent)).toBe(true);
    expect(ajv.validate(schema, { ...sent, data: { ...sent.data, test: false } })).toBe(false);
    for (const kind of EVENT_KINDS) expect(ajv.validate(schema, EVENT_CATALOGUE[kind].example)).toBe(false);
  });
});
