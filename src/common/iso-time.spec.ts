import { isoString } from './iso-time';

const END = Date.UTC(10000, 0, 1);

describe('isoString', () => {
  it('writes the same text as toISOString at the edges of days, months, leap years and its range', () => {
    const instants = [
      0,
      1,
      999,
      Date.UTC(1970, 0, 1, 23, 59, 59, 999),
      Date.UTC(1999, 11, 31, 23, 59, 59, 999),
      Date.UTC(2000, 1, 29, 12, 0, 0, 5),
      Date.UTC(2000, 2, 1),
      Date.UTC(2023, 1, 28, 23, 59, 59, 990),
      Date.UTC(2024, 1, 29, 0, 0, 0, 50),
      Date.UTC(2100, 1, 28, 23, 59, 59, 999),
      Date.UTC(2100, 2, 1),
      Date.UTC(2400, 1, 29, 7, 8, 9, 10),
      END - 1,
    ];
    for (const ms of instants) expect(isoString(new Date(ms))).toBe(new Date(ms).toISOString());
  });

  it('agrees with toISOString on a million instants, in and out of order (the day cache)', () => {
    let seed = 42;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    let ms = Date.UTC(2024, 0, 1);
    for (let i = 0; i < 1_000_000; i++) {
      // Runs of nearby instants (a page) between jumps anywhere in the fast range.
      ms = i % 50 === 0 ? Math.floor(next() * END) : Math.max(0, ms - Math.floor(next() * 3_600_000));
      const got = isoString(new Date(ms));
      if (got !== new Date(ms).toISOString()) throw new Error(`${ms}: ${got} != ${new Date(ms).toISOString()}`);
    }
  });

  it('leaves instants outside 1970–9999 to toISOString, and throws as it does on an invalid date', () => {
    for (const ms of [-1, Date.UTC(1969, 11, 31, 23, 59, 59, 999), -8.64e15, END, 8.64e15]) {
      expect(isoString(new Date(ms))).toBe(new Date(ms).toISOString());
    }
    expect(() => isoString(new Date(NaN))).toThrow(RangeError);
  });
});
