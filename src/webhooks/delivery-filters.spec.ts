import { AppError } from '../common/errors';
import { filterParams, parseDeliveryFilter, parseInstant } from './delivery-filters';

function refusal(query: Record<string, unknown>): AppError {
  try {
    parseDeliveryFilter(query);
  } catch (err) {
    return err as AppError;
  }
  throw new Error(`accepted ${JSON.stringify(query)}`);
}

describe('parseInstant', () => {
  it.each([
    ['2026-11-28T07:00:00Z', '2026-11-28T07:00:00.000Z'],
    ['2026-11-28T07:00Z', '2026-11-28T07:00:00.000Z'],
    ['2026-11-28t07:00:00.5z', '2026-11-28T07:00:00.500Z'],
    ['2026-11-28T07:00:00.123456Z', '2026-11-28T07:00:00.123Z'],
    ['2026-11-28T09:30:00+02:30', '2026-11-28T07:00:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
  ])('reads %s', (text, iso) => {
    expect(parseInstant(text)?.toISOString()).toBe(iso);
  });

  it.each(['2026-11-28', '2026-11-28T07:00:00', '2026-02-30T00:00:00Z', '2025-02-29T00:00:00Z', '2026-11-28T24:00:00Z', '2026-11-28T07:60:00Z', '2026-11-28T07:00:00+24:00', 'yesterday', '1764313200', ' 2026-11-28T07:00:00Z', ''])(
    'refuses %j',
    (text) => {
      expect(parseInstant(text)).toBeNull();
    },
  );
});

describe('parseDeliveryFilter', () => {
  it('reads each filter, all optional', () => {
    expect(parseDeliveryFilter({})).toEqual({});
    expect(parseDeliveryFilter({ state: 'failed' })).toEqual({ state: 'failed' });
    expect(parseDeliveryFilter({ since: '2026-11-28T07:00:00Z', until: '2026-11-28T08:00:00Z' })).toEqual({ since: new Date('2026-11-28T07:00:00Z'), until: new Date('2026-11-28T08:00:00Z') });
  });

  it.each([
    [{ state: 'lost' }, 'state'],
    [{ state: 'FAILED' }, 'state'],
    [{ state: ['failed', 'pending'] }, 'state'],
    [{ since: 'yesterday' }, 'since'],
    [{ until: '2026-11-28' }, 'until'],
    [{ since: ['2026-11-28T07:00:00Z', '2026-11-28T08:00:00Z'] }, 'since'],
    [{ since: '2026-11-28T08:00:00Z', until: '2026-11-28T08:00:00Z' }, 'since must be before until'],
  ])('refuses %j with VALIDATION_ERROR naming the parameter', (query, named) => {
    const err = refusal(query);
    expect(err).toBeInstanceOf(AppError);
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.message).toContain(named);
  });

  it('gives the cursor normalised parameters: one instant, one text', () => {
    const a = filterParams(parseDeliveryFilter({ since: '2026-11-28T09:00:00+02:00', state: 'pending' }));
    const b = filterParams(parseDeliveryFilter({ since: '2026-11-28T07:00:00.000Z', state: 'pending' }));
    expect(a).toEqual(b);
    expect(filterParams({})).toEqual({});
  });
});
