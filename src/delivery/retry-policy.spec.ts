import fc from 'fast-check';
import { parseRetryAfter } from '../common/retry-after';
import { DEFAULT_RETRY_SCHEDULE_S, parseRetrySchedule, RetryPolicy } from './retry-policy';

const HOUR = 3_600_000;
const ALMOST_ONE = 1 - Number.EPSILON / 2; // largest double below 1

const defaultPolicy = (random: () => number = () => 0.5) =>
  new RetryPolicy({ scheduleSeconds: DEFAULT_RETRY_SCHEDULE_S, random });

describe('DEFAULT_RETRY_SCHEDULE_S', () => {
  it('is 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
    expect(DEFAULT_RETRY_SCHEDULE_S).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(Object.isFrozen(DEFAULT_RETRY_SCHEDULE_S)).toBe(true);
  });
});

describe('parseRetrySchedule', () => {
  it.each([
    ['0.05,0.1,0.2', [0.05, 0.1, 0.2]],
    ['5,300,1800,7200,18000,36000,36000', [5, 300, 1800, 7200, 18000, 36000, 36000]],
    ['1', [1]],
    [' 1 , 2.5 ,.5, 3. ', [1, 2.5, 0.5, 3]],
    ['007', [7]],
  ])('parses %p', (text, expected) => {
    expect(parseRetrySchedule(text)).toEqual(expected);
  });

  it.each([
    [''],
    ['   '],
    ['0'],
    ['0.0'],
    ['-1'],
    ['1,,2'],
    ['1,'],
    [',1'],
    ['abc'],
    ['1;2'],
    ['1 2'],
    ['1e3'],
    ['0x10'],
    ['Infinity'],
    ['NaN'],
    ['+5'],
    ['5s'],
    ['1'.repeat(400)], // finite-looking but overflows to Infinity
  ])('rejects %p with a clear error', (text) => {
    expect(() => parseRetrySchedule(text)).toThrow(/retry schedule/i);
  });

  it('names the offending entry', () => {
    expect(() => parseRetrySchedule('1,2,x')).toThrow(/entry 3 \("x"\)/);
  });
});

describe('RetryPolicy', () => {
  it('allows 8 attempts by default and none after the last', () => {
    const policy = defaultPolicy();
    expect(policy.maxAttempts).toBe(8);
    for (let made = 1; made < 8; made++) expect(policy.nextDelayMs(made, null)).not.toBeNull();
    expect(policy.nextDelayMs(8, null)).toBeNull();
    expect(policy.nextDelayMs(9, null)).toBeNull();
  });

  it('uses the nominal schedule at random = 0.5', () => {
    const policy = defaultPolicy(() => 0.5);
    const delays = [1, 2, 3, 4, 5, 6, 7].map((made) => policy.nextDelayMs(made, null));
    expect(delays).toEqual(DEFAULT_RETRY_SCHEDULE_S.map((s) => s * 1000));
  });

  it.each([
    [0, 0.8],
    [ALMOST_ONE, 1.2],
    [1, 1.2], // a misbehaving random() still cannot exceed the bound
    [-3, 0.8],
    [Number.NaN, 1],
  ])('keeps jitter within ±20 %% (random = %p → ×%p)', (r, factor) => {
    const policy = defaultPolicy(() => r);
    DEFAULT_RETRY_SCHEDULE_S.forEach((s, i) => {
      expect(policy.nextDelayMs(i + 1, null)).toBe(Math.round(s * 1000 * factor));
    });
  });

  it('returns whole milliseconds', () => {
    const policy = defaultPolicy(() => 0.123456789);
    for (let made = 1; made < 8; made++) expect(Number.isInteger(policy.nextDelayMs(made, null))).toBe(true);
  });

  it('follows a custom schedule, whose length sets the attempts', () => {
    const policy = new RetryPolicy({ scheduleSeconds: parseRetrySchedule('0.05,0.1,0.2'), random: () => 0.5 });
    expect(policy.maxAttempts).toBe(4);
    expect([1, 2, 3, 4].map((m) => policy.nextDelayMs(m, null))).toEqual([50, 100, 200, null]);
  });

  it('honours a custom jitter, including none', () => {
    const none = new RetryPolicy({ scheduleSeconds: [10], jitter: 0, random: () => 0 });
    expect(none.nextDelayMs(1, null)).toBe(10_000);
    const half = new RetryPolicy({ scheduleSeconds: [10], jitter: 0.5, random: () => 0 });
    expect(half.nextDelayMs(1, null)).toBe(5_000);
  });

  it('keeps sub-millisecond schedules inside the jitter window', () => {
    const policy = new RetryPolicy({ scheduleSeconds: [0.0001], random: () => 0 });
    expect(policy.nextDelayMs(1, null)).toBeCloseTo(0.08, 10);
  });

  describe('Retry-After', () => {
    it('lengthens the delay when longer than the jittered schedule', () => {
      expect(defaultPolicy().nextDelayMs(1, 60_000)).toBe(60_000);
    });

    it('never shortens the jittered schedule', () => {
      const policy = defaultPolicy(() => 0);
      expect(policy.nextDelayMs(2, 1_000)).toBe(240_000);
      expect(policy.nextDelayMs(1, 0)).toBe(4_000);
    });

    it('is capped at 1 h', () => {
      expect(defaultPolicy().nextDelayMs(1, 86_400_000)).toBe(HOUR);
      expect(defaultPolicy().nextDelayMs(3, 2 * HOUR)).toBe(HOUR); // 30 min schedule < cap
      expect(defaultPolicy().nextDelayMs(4, 2 * HOUR)).toBe(7_200_000); // schedule already ≥ cap
    });

    it('honours a custom cap', () => {
      const policy = new RetryPolicy({ scheduleSeconds: [1], maxRetryAfterMs: 10_000, random: () => 0.5 });
      expect(policy.nextDelayMs(1, 60_000)).toBe(10_000);
    });

    it('works end to end with parseRetryAfter (seconds and HTTP-date)', () => {
      const now = new Date('2025-01-02T03:04:05.000Z');
      expect(defaultPolicy().nextDelayMs(1, parseRetryAfter('120', now))).toBe(120_000);
      expect(defaultPolicy().nextDelayMs(1, parseRetryAfter('Thu, 02 Jan 2025 03:14:05 GMT', now))).toBe(600_000);
      expect(defaultPolicy().nextDelayMs(1, parseRetryAfter('Fri, 03 Jan 2025 03:04:05 GMT', now))).toBe(HOUR);
    });

    it.each([[Number.NaN], [-1], [Number.POSITIVE_INFINITY]])('ignores an invalid value %p', (v) => {
      expect(defaultPolicy().nextDelayMs(1, v)).toBe(5_000);
    });

    it('does not resurrect a finished schedule', () => {
      expect(defaultPolicy().nextDelayMs(8, 1_000)).toBeNull();
    });
  });

  it.each([[0], [-1], [1.5], [Number.NaN]])('rejects attemptsMade = %p', (made) => {
    expect(() => defaultPolicy().nextDelayMs(made, null)).toThrow(Error);
  });

  it.each([
    [{ scheduleSeconds: [0] }],
    [{ scheduleSeconds: [-1] }],
    [{ scheduleSeconds: [Number.NaN] }],
    [{ scheduleSeconds: [Number.POSITIVE_INFINITY] }],
    [{ scheduleSeconds: [1], jitter: 1 }],
    [{ scheduleSeconds: [1], jitter: -0.1 }],
    [{ scheduleSeconds: [1], maxRetryAfterMs: -1 }],
    [{ scheduleSeconds: 'nope' as unknown as number[] }],
  ])('rejects invalid options %p', (opts) => {
    expect(() => new RetryPolicy(opts)).toThrow(Error);
  });

  it('allows an empty schedule (a single attempt)', () => {
    const policy = new RetryPolicy({ scheduleSeconds: [] });
    expect(policy.maxAttempts).toBe(1);
    expect(policy.nextDelayMs(1, null)).toBeNull();
  });

  it('property: every delay is within [0.8, 1.2] × nominal or equals the clamped Retry-After', () => {
    const schedule = fc.array(fc.double({ min: 0.001, max: 100_000, noNaN: true }), { minLength: 1, maxLength: 10 });
    fc.assert(
      fc.property(
        schedule,
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.nat({ max: 12 }),
        fc.option(fc.double({ min: 0, max: 10 * 86_400_000, noNaN: true })),
        (scheduleSeconds, r, made0, retryAfterMs) => {
          const policy = new RetryPolicy({ scheduleSeconds, random: () => r });
          const made = made0 + 1;
          const delay = policy.nextDelayMs(made, retryAfterMs);
          if (made >= scheduleSeconds.length + 1) {
            expect(delay).toBeNull();
            return;
          }
          expect(delay).not.toBeNull();
          const nominal = scheduleSeconds[made - 1] * 1000;
          const d = delay as number;
          const withinJitter = d >= nominal * 0.8 && d <= nominal * 1.2;
          const clamped = retryAfterMs === null ? null : Math.round(Math.min(retryAfterMs, HOUR));
          expect(withinJitter || d === clamped).toBe(true);
          // Retry-After only ever lengthens the wait.
          if (clamped !== null) expect(d).toBeGreaterThanOrEqual(clamped);
          expect(d).toBeGreaterThanOrEqual(nominal * 0.8);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
