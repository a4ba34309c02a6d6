import { afterFailure, applyFailures, countsAsFailure, DEFAULT_DISABLE_AFTER_MS, FailureClock } from './disable-rule';

const H = 3_600_000;
const D = 24 * H;
const AFTER = DEFAULT_DISABLE_AFTER_MS; // 5 days: periods of a day
const T0 = Date.UTC(2026, 0, 1);

const fresh = (since: number | null = T0): FailureClock => ({ failingSince: since, failurePeriods: 0, lastFailurePeriod: null });

/** The clock after these failures (ms after T0), in order; and whether the last one disabled. */
function run(offsets: number[], gone = false): FailureClock & { disable: string | null } {
  let clock: FailureClock = fresh();
  let last: ReturnType<typeof afterFailure> = { ...clock, disable: null };
  for (const [i, off] of offsets.entries()) {
    last = afterFailure(clock, { at: T0 + off, gone: gone && i === offsets.length - 1 }, AFTER);
    clock = last;
    if (last.disable) break;
  }
  return last;
}

describe('auto-disable rule', () => {
  it('disables a receiver that failed every day for the whole window', () => {
    const hourly = Array.from({ length: 5 * 24 + 1 }, (_, i) => i * H);
    const r = run(hourly);
    expect(r.disable).toBe('failing');
    expect(r.failurePeriods).toBe(6);
  });

  it('does not disable before the window has passed, however many failures', () => {
    const everyMinute = Array.from({ length: 5 * 24 * 60 - 1 }, (_, i) => i * 60_000);
    expect(run(everyMinute).disable).toBeNull();
  });

  it('never trips on a short burst, even long after an old isolated failure', () => {
    // One failure on day 0, nothing for six days, then a ten-minute burst.
    const burst = Array.from({ length: 100 }, (_, i) => 6 * D + i * 6000);
    const r = run([0, ...burst]);
    expect(r.disable).toBeNull();
    expect(r.failurePeriods).toBe(2);
  });

  it('trips once failures are spread over three periods and the window has passed', () => {
    expect(run([0, 2 * D, 6 * D]).disable).toBe('failing');
    expect(run([0, H, 2 * H, 6 * D]).disable).toBeNull();
  });

  it('counts each period once, in order, and ignores attempts older than the clock', () => {
    const a = afterFailure(fresh(), { at: T0 + H, gone: false }, AFTER);
    expect(a).toMatchObject({ failurePeriods: 1, lastFailurePeriod: 0 });
    const b = afterFailure(a, { at: T0 + 2 * H, gone: false }, AFTER);
    expect(b).toMatchObject({ failurePeriods: 1, lastFailurePeriod: 0 });
    const c = afterFailure(b, { at: T0 + D + H, gone: false }, AFTER);
    expect(c).toMatchObject({ failurePeriods: 2, lastFailurePeriod: 1 });
    // A hung attempt's late outcome, started in an earlier period: no new period.
    expect(afterFailure(c, { at: T0 + 3 * H, gone: false }, AFTER)).toMatchObject({ failurePeriods: 2, lastFailurePeriod: 1 });
    expect(afterFailure(c, { at: T0 - H, gone: false }, AFTER)).toMatchObject({ failurePeriods: 2, disable: null });
  });

  it('does nothing without a running clock (a newer attempt was delivered)', () => {
    expect(afterFailure(fresh(null), { at: T0 + 9 * D, gone: false }, AFTER)).toEqual({ ...fresh(null), disable: null });
  });

  it('disables at once on 410 Gone, clock or not, rule on or off', () => {
    expect(afterFailure(fresh(null), { at: T0, gone: true }, AFTER).disable).toBe('gone');
    expect(afterFailure(fresh(), { at: T0, gone: true }, null).disable).toBe('gone');
  });

  it('never disables for failing when the rule is off', () => {
    let clock = fresh();
    for (let d = 0; d <= 30; d++) {
      const r = afterFailure(clock, { at: T0 + d * D, gone: false }, null);
      expect(r.disable).toBeNull();
      clock = r;
    }
  });

  it('scales the periods with the window', () => {
    const afterHour = H;
    let clock = fresh();
    let disable: string | null = null;
    for (const m of [0, 15, 30, 45, 60]) ({ disable, ...clock } = afterFailure(clock, { at: T0 + m * 60_000, gone: false }, afterHour));
    expect(disable).toBe('failing');
  });

  it('counts failures of the receiver only', () => {
    expect(countsAsFailure('http_500')).toBe(true);
    expect(countsAsFailure('timeout')).toBe(true);
    expect(countsAsFailure('http_410')).toBe(true);
    expect(countsAsFailure('worker_lost')).toBe(false);
    expect(countsAsFailure('secret_unreadable')).toBe(false);
  });

  describe('applyFailures', () => {
    const row = (id: string, over: Partial<FailureClock> = {}) => ({ id, ...fresh(), ...over });

    it('takes each webhook\'s failures in time order and stops at the one that disables', () => {
      const out = applyFailures(
        [row('a'), row('b'), row('c', { failingSince: null })],
        [
          { webhookId: 'a', at: T0 + 6 * D, gone: false },
          { webhookId: 'a', at: T0, gone: false },
          { webhookId: 'a', at: T0 + 2 * D, gone: false },
          { webhookId: 'b', at: T0 + H, gone: false },
          { webhookId: 'c', at: T0 + H, gone: false },
        ],
        AFTER,
      );
      expect(out.map((o) => [o.row.id, o.disable, o.clock.failurePeriods])).toEqual([
        ['a', 'failing', 3],
        ['b', null, 1],
      ]);
    });

    it('answers nothing for a failure that changes no count', () => {
      expect(applyFailures([row('a', { failurePeriods: 1, lastFailurePeriod: 0 })], [{ webhookId: 'a', at: T0 + H, gone: false }], AFTER)).toEqual([]);
    });
  });
});
