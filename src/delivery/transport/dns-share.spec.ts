import { DnsShare } from './dns-share';

describe('DnsShare', () => {
  it('gives each customer at most `limit` places, refusing the next at once', () => {
    const share = new DnsShare(2);
    const a1 = share.enter('a');
    const a2 = share.enter('a');
    expect([a1, a2].every((x) => typeof x === 'function')).toBe(true);
    expect(share.enter('a')).toBeNull();
    expect(share.inFlight('a')).toBe(2);
    // Another customer's places are its own.
    expect(share.enter('b')).not.toBeNull();
    expect(share.inFlight('b')).toBe(1);
  });

  it('gives a place back once, however often its release is called', () => {
    const share = new DnsShare(2);
    const a1 = share.enter('a')!;
    share.enter('a');
    a1();
    a1();
    expect(share.inFlight('a')).toBe(1);
    expect(share.enter('a')).not.toBeNull();
    expect(share.enter('a')).toBeNull();
  });

  it('forgets customers with nothing in flight', () => {
    const share = new DnsShare(1);
    const releases = ['a', 'b', 'c'].map((c) => share.enter(c)!);
    expect(share.customers).toBe(3);
    for (const r of releases) r();
    expect(share.customers).toBe(0);
  });

  it('hands the resolver a gate bound to one customer, naming the limit', () => {
    const share = new DnsShare(1);
    const gate = share.gateFor('a');
    expect(gate.limit).toBe(1);
    const leave = gate.enter();
    expect(leave).not.toBeNull();
    expect(gate.enter()).toBeNull();
    expect(share.gateFor('b').enter()).not.toBeNull();
    leave!();
    expect(gate.enter()).not.toBeNull();
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses a limit of %p', (limit) => {
    expect(() => new DnsShare(limit)).toThrow(/DNS lookups per customer must be a positive whole number/);
  });
});
