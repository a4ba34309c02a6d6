import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { TREND_KINDS } from './detectors/event-key';
import { EVENT_KINDS, eventBodySchema } from './event-kinds';

describe('event catalogue', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);

  it('describes every trend kind', () => {
    expect(Object.keys(EVENT_KINDS).sort()).toEqual([...TREND_KINDS].sort());
  });

  it.each([...TREND_KINDS])('%s: its example is a valid body of its own schema, and not of the others', (kind) => {
    const { example, ...schema } = eventBodySchema(kind);
    expect(ajv.validate(schema, example)).toBe(true);
    expect(ajv.errors ?? null).toBeNull();
    for (const other of TREND_KINDS.filter((k) => k !== kind)) {
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
});
