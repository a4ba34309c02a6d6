import { isUnavailable, sourceStatusOf, unavailableErrorClass } from './coverage';

describe('coverage status', () => {
  const failed = (lastError: string) => sourceStatusOf({ lastError, lastPolledAt: 1 });

  it('is pending before the first read and ok after a successful one', () => {
    expect(sourceStatusOf(undefined)).toBe('pending');
    expect(sourceStatusOf({ lastError: null, lastPolledAt: null })).toBe('pending');
    expect(sourceStatusOf({ lastError: null, lastPolledAt: 1 })).toBe('ok');
  });

  it("tells private, quarantined, banned and unknown subreddits apart by Reddit's status and reason", () => {
    expect(unavailableErrorClass(403, 'private')).toBe('unavailable_403_private');
    expect(unavailableErrorClass(302, null)).toBe('unavailable_302');
    expect(failed('unavailable_403_private')).toBe('private');
    expect(failed('unavailable_403_quarantined')).toBe('quarantined');
    expect(failed('unavailable_404_banned')).toBe('banned');
    expect(failed('unavailable_302')).toBe('not_found');
    expect(failed('unavailable_404')).toBe('not_found');
    // A restriction without a reason Reddit names is still a refusal to read.
    expect(failed('unavailable_403')).toBe('private');
    expect(failed('unavailable_403_gold_only')).toBe('private');
    // Never read, and refused from the first read.
    expect(sourceStatusOf({ lastError: 'unavailable_403_private', lastPolledAt: null })).toBe('private');
  });

  it('calls a read that ran out of retries on 429 throttled, and any other failure error', () => {
    expect(failed('http_429')).toBe('throttled');
    for (const e of ['http_503', 'timeout', 'network_econnrefused', 'bad_json', 'internal']) expect(failed(e)).toBe('error');
  });

  it('knows a refusal from a failed read', () => {
    expect(isUnavailable('unavailable_302')).toBe(true);
    expect(isUnavailable('http_503')).toBe(false);
    expect(isUnavailable(null)).toBe(false);
  });
});
