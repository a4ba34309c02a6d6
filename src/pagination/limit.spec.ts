import { AppError } from '../common/errors';
import { DEFAULT_PAGE_LIMIT, ENDPOINT_MAX_PAGE_SIZE, effectiveMaxPageSize, parseLimit } from './limit';

describe('parseLimit', () => {
  it.each<[unknown, number, number]>([
    [undefined, 100, 25],
    [undefined, 10, 10], // default lowered to a plan max below it
    ['1', 100, 1],
    ['25', 100, 25],
    ['50', 50, 50],
    ['100', 100, 100],
    ['007', 100, 7],
  ])('%p with max %p → %p', (raw, max, expected) => {
    expect(parseLimit(raw, max)).toBe(expected);
  });

  it('uses a custom default', () => {
    expect(parseLimit(undefined, 100, 10)).toBe(10);
    expect(DEFAULT_PAGE_LIMIT).toBe(25);
  });

  it.each<[unknown]>([
    ['0'],
    ['51'],
    ['1000000000000000000000000'],
    [''],
    ['1.5'],
    ['1.0'],
    ['1e2'],
    [' 5'],
    ['5 '],
    ['+5'],
    ['-5'],
    ['0x10'],
    ['ten'],
    ['５'], // full-width digit
    [['5']],
    [['5', '6']],
    [5],
    [null],
    [{}],
    [true],
  ])('%p → 400 BAD_REQUEST naming the maximum', (raw) => {
    let thrown: unknown;
    try {
      parseLimit(raw, 50);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ code: 'BAD_REQUEST', status: 400, message: 'limit must be an integer between 1 and 50' });
  });

  it('rejects a nonsensical max or default as a programming error', () => {
    expect(() => parseLimit('5', 0)).toThrow(/max must be a positive integer/);
    expect(() => parseLimit('5', 10, 0)).toThrow(/defaultLimit/);
    expect(() => parseLimit('5', 0)).not.toThrow(AppError);
  });
});

describe('effectiveMaxPageSize', () => {
  it('is the lower of the endpoint cap and the plan max', () => {
    expect(effectiveMaxPageSize(ENDPOINT_MAX_PAGE_SIZE, 50)).toBe(50);
    expect(effectiveMaxPageSize(ENDPOINT_MAX_PAGE_SIZE, 500)).toBe(100);
    expect(effectiveMaxPageSize(100, 100)).toBe(100);
  });

  it('rejects non-positive or non-integer inputs', () => {
    expect(() => effectiveMaxPageSize(100, 0)).toThrow(/planMax/);
    expect(() => effectiveMaxPageSize(Number.NaN, 10)).toThrow(/endpointCap/);
    expect(() => effectiveMaxPageSize(100, 2.5)).toThrow(/planMax/);
  });
});
