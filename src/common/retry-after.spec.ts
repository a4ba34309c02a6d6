import { parseRetryAfter } from './retry-after';

const HOUR = 3_600_000;

describe('parseRetryAfter', () => {
  const now = new Date('2025-01-02T03:04:05.000Z');

  it.each([
    ['0', 0],
    ['1', 1000],
    ['120', 120_000],
    [' 30 ', 30_000],
    ['86400', 86_400_000],
  ])('reads delta-seconds %p', (header, ms) => {
    expect(parseRetryAfter(header, now)).toBe(ms);
  });

  it.each([
    ['Thu, 02 Jan 2025 03:05:05 GMT', 60_000], // IMF-fixdate
    ['Thursday, 02-Jan-25 03:06:05 GMT', 120_000], // RFC 850
    ['Thu Jan  2 03:04:35 2025', 30_000], // asctime, read as GMT whatever the local zone
    ['thu, 02 jan 2025 05:04:05 gmt', 2 * HOUR],
    ['Thu, 02 Jan 2025 03:04:05 GMT', 0],
    ['Wed, 01 Jan 2025 00:00:00 GMT', 0], // in the past: retry now
  ])('reads HTTP-date %p', (header, ms) => {
    expect(parseRetryAfter(header, now)).toBe(ms);
  });

  it('takes the first of repeated headers', () => {
    expect(parseRetryAfter(['10', '20'], now)).toBe(10_000);
  });

  it.each([
    [undefined],
    [[]],
    [''],
    ['  '],
    ['-5'],
    ['1.5'],
    ['+5'],
    ['5 s'],
    ['soon'],
    ['2025-01-02T03:05:05Z'], // ISO 8601 is not an HTTP-date
    ['Thu, 02 Jan 2025 03:05:05 +0000'],
    ['Thu, 31 Feb 2025 03:05:05 GMT'],
    ['Thu, 02 Foo 2025 03:05:05 GMT'],
    ['Thu, 02 Jan 2025 25:05:05 GMT'],
  ])('returns null for %p', (header) => {
    expect(parseRetryAfter(header as string | string[] | undefined, now)).toBeNull();
  });
});
