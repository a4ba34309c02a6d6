import { TwoGenerationCache } from './two-generation-cache';

describe('TwoGenerationCache', () => {
  it('answers what was set, and nothing for what was not', () => {
    const c = new TwoGenerationCache<string, number>(4);
    c.set('a', 1);
    c.set('b', 2);
    expect(c.get('a')).toBe(1);
    expect(c.get('b')).toBe(2);
    expect(c.get('z')).toBeUndefined();
  });

  it('holds at most twice its bound however many keys pass through', () => {
    const c = new TwoGenerationCache<number, number>(3);
    for (let i = 0; i < 100; i++) {
      c.set(i, i);
      expect(c.size).toBeLessThanOrEqual(6);
    }
    // The last `max` keys are always there; the oldest are gone.
    expect([97, 98, 99].map((k) => c.get(k))).toEqual([97, 98, 99]);
    expect(c.get(0)).toBeUndefined();
  });

  it('keeps a key read in the older generation through the next turnover', () => {
    const c = new TwoGenerationCache<string, number>(2);
    c.set('kept', 1);
    c.set('x', 2);
    c.set('y', 3); // turnover: kept, x are the older generation
    expect(c.get('kept')).toBe(1); // carried over into the current one (y, kept)
    c.set('z', 4); // turnover: y, kept older; z current
    expect(c.get('kept')).toBe(1);
    expect(c.get('x')).toBeUndefined();
  });

  it('setting a key again replaces its value without a turnover', () => {
    const c = new TwoGenerationCache<string, number>(2);
    c.set('a', 1);
    c.set('b', 2);
    c.set('b', 3);
    expect(c.get('a')).toBe(1);
    expect(c.get('b')).toBe(3);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new TwoGenerationCache(0)).toThrow(/positive integer/);
  });
});
