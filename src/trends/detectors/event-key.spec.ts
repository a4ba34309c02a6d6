import fc from 'fast-check';
import { EVENT_KINDS } from '../../events/catalogue';
import { eventKey } from './event-key';

describe('eventKey', () => {
  it('is a stable, readable string', () => {
    expect(eventKey('trends.surge', 'AskReddit', 1704067200000, '')).toBe('v1:trends.surge:askreddit:1704067200000:');
    expect(eventKey('trends.velocity', 'pics', 1704067200000, 'eclipse')).toBe('v1:trends.velocity:pics:1704067200000:eclipse');
    expect(eventKey('trends.rising', 'pics', 1704067200000, '1abcde')).toBe('v1:trends.rising:pics:1704067200000:1abcde');
  });

  it('treats subreddit names case-insensitively', () => {
    expect(eventKey('trends.surge', 'WorldNews', 1, '')).toBe(eventKey('trends.surge', 'worldnews', 1, ''));
  });

  it('encodes parts so a separator in a part cannot collide with another key', () => {
    expect(eventKey('trends.velocity', 'a:b', 1, 'c')).not.toBe(eventKey('trends.velocity', 'a', 1, 'b:c'));
    expect(eventKey('trends.velocity', 'a', 1, 'b:c')).toBe('v1:trends.velocity:a:1:b%3Ac');
  });

  it('is injective over (kind, lower-cased subreddit, window, discriminator)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...EVENT_KINDS),
        fc.constantFrom(...EVENT_KINDS),
        fc.string(),
        fc.string(),
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 1 }),
        fc.integer({ min: 0, max: 2 ** 45 }),
        fc.integer({ min: 0, max: 2 ** 45 }),
        (k1, k2, d1, d2, s1, s2, w1, w2) => {
          const same = k1 === k2 && d1 === d2 && s1.toLowerCase() === s2.toLowerCase() && w1 === w2;
          expect(eventKey(k1, s1, w1, d1) === eventKey(k2, s2, w2, d2)).toBe(same);
        },
      ),
    );
  });

  it('rejects bad input', () => {
    expect(() => eventKey('trends.other' as 'trends.surge', 'a', 1, '')).toThrow(RangeError);
    expect(() => eventKey('trends.surge', '', 1, '')).toThrow(RangeError);
    expect(() => eventKey('trends.surge', 'a', 1.5, '')).toThrow(RangeError);
  });
});
