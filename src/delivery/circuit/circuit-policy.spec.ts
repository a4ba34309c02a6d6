import type { SendOutcome } from '../transport/delivery-transport';
import { admission, CircuitRow, circuitSignal, circuitView, halfOpen, onFailure, onSuccess, pauseMs, resolveCircuitOptions } from './circuit-policy';

const o = resolveCircuitOptions({ failures: 3, throttle: 2, pauseMs: 1000, maxPauseMs: 5000 });
const T0 = new Date('2026-01-02T03:04:05.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

function fail(row: CircuitRow | null, times: number, now = T0, probe = false): CircuitRow {
  let r = row;
  for (let i = 0; i < times; i++) r = onFailure(r, now, o, probe);
  return r!;
}

const failure = (errorClass: string, statusCode: number | null = null, kind: 'transient' | 'permanent' = 'transient'): SendOutcome => ({
  kind,
  stage: statusCode === null ? 'during' : 'after_response',
  errorClass,
  statusCode,
  excerpt: null,
  retryAfterMs: null,
  durationMs: 10,
});

describe('circuit policy', () => {
  it('counts only failures that got no answer; any answer is a success; permanent refusals before connecting and cancellations say nothing', () => {
    for (const c of ['timeout', 'connection_refused', 'connection_reset', 'dns_failure', 'tls_failure', 'network_error', 'private_destination_error']) {
      expect([c, circuitSignal(failure(c))]).toEqual([c, 'failure']);
    }
    expect(circuitSignal(failure('http_503', 503))).toBe('success');
    expect(circuitSignal(failure('http_429', 429))).toBe('success');
    expect(circuitSignal(failure('http_404', 404, 'permanent'))).toBe('success');
    expect(circuitSignal({ kind: 'delivered', statusCode: 204, excerpt: null, durationMs: 3 })).toBe('success');
    expect(circuitSignal(failure('destination_blocked', null, 'permanent'))).toBeNull();
    expect(circuitSignal(failure('secret_unreadable', null, 'permanent'))).toBeNull();
    expect(circuitSignal({ kind: 'cancelled' })).toBeNull();
    expect(circuitSignal(undefined)).toBeNull();
  });

  it('throttles after `failures` in a row, opens after as many more, for the first pause', () => {
    expect(fail(null, 2)).toMatchObject({ state: 'closed', consecutiveFailures: 2 });
    expect(fail(null, 3)).toMatchObject({ state: 'throttled', consecutiveFailures: 3, openedUntil: null });
    expect(fail(null, 5)).toMatchObject({ state: 'throttled', consecutiveFailures: 5 });
    expect(fail(null, 6)).toEqual({ state: 'open', consecutiveFailures: 6, openedUntil: at(1000), openCount: 1, updatedAt: T0 });
  });

  it('an answer closes the circuit from any state (no row to keep)', () => {
    expect(onSuccess()).toBeNull();
  });

  it('starts the count again after a failure long ago with nothing since', () => {
    const old = fail(null, 2);
    expect(onFailure(old, at(o.maxPauseMs + 1), o)).toMatchObject({ state: 'closed', consecutiveFailures: 1 });
    expect(onFailure(old, at(o.maxPauseMs), o)).toMatchObject({ state: 'throttled', consecutiveFailures: 3 });
  });

  it('lets a throttled destination have `throttle` attempts in flight and puts the next off by the given time', () => {
    const r = fail(null, 3);
    expect(admission(r, T0, 1, o, 700)).toEqual({ kind: 'send' });
    expect(admission(r, T0, 2, o, 700)).toEqual({ kind: 'defer', until: at(700) });
    expect(admission(null, T0, 1000, o, 700)).toEqual({ kind: 'send' });
    expect(admission(fail(null, 2), T0, 1000, o, 700)).toEqual({ kind: 'send' });
  });

  it('puts everything off while open, then allows a probe once the pause is over', () => {
    const r = fail(null, 6);
    expect(admission(r, at(999), 0, o, 700)).toEqual({ kind: 'defer', until: at(1000) });
    expect(admission(r, at(1000), 0, o, 700)).toEqual({ kind: 'probe' });
    // An attempt that started before it opened fails later: counted, the pause unchanged.
    expect(onFailure(r, at(500), o)).toMatchObject({ state: 'open', consecutiveFailures: 7, openedUntil: at(1000), openCount: 1 });
  });

  it('half-open: the probe is alone until its deadline; its failure reopens for twice as long, up to the cap', () => {
    const r = halfOpen(fail(null, 6), at(1000), at(3000));
    expect(r).toMatchObject({ state: 'half_open', openedUntil: at(3000), openCount: 1 });
    expect(admission(r, at(2999), 0, o, 700)).toEqual({ kind: 'defer', until: at(3000) });
    // The probe's worker died: after the deadline another may go.
    expect(admission(r, at(3000), 0, o, 700)).toEqual({ kind: 'probe' });
    // Another attempt's failure (one started earlier) does not decide it.
    expect(onFailure(r, at(1500), o)).toMatchObject({ state: 'half_open', openedUntil: at(3000) });
    const reopened = onFailure(r, at(1500), o, true);
    expect(reopened).toMatchObject({ state: 'open', openedUntil: at(1500 + 2000), openCount: 2 });
    expect([1, 2, 3, 4, 5].map((n) => pauseMs(n, o))).toEqual([1000, 2000, 4000, 5000, 5000]);
    let x = reopened;
    for (let i = 0; i < 40; i++) x = onFailure(halfOpen(x, T0, at(1)), T0, o, true);
    expect(x.openedUntil).toEqual(at(5000));
  });

  it('shows the pause end or the probe deadline as `until`, nothing for closed and throttled', () => {
    expect(circuitView(null)).toEqual({ state: 'closed', until: null, consecutiveFailures: 0 });
    expect(circuitView(fail(null, 4))).toEqual({ state: 'throttled', until: null, consecutiveFailures: 4 });
    expect(circuitView(fail(null, 6))).toEqual({ state: 'open', until: at(1000), consecutiveFailures: 6 });
  });

  it('refuses options that make no sense', () => {
    expect(() => resolveCircuitOptions({ failures: -1 })).toThrow(/failures \(-1\) must be a whole number of at least 0/);
    expect(() => resolveCircuitOptions({ throttle: 0 })).toThrow(/throttle/);
    expect(() => resolveCircuitOptions({ pauseMs: 1.5 })).toThrow(/pauseMs/);
    expect(() => resolveCircuitOptions({ pauseMs: 2000, maxPauseMs: 1000 })).toThrow(/maxPauseMs \(1000\) must be at least pauseMs \(2000\)/);
    expect(resolveCircuitOptions()).toEqual({ failures: 5, throttle: 2, pauseMs: 30_000, maxPauseMs: 600_000 });
  });
});
