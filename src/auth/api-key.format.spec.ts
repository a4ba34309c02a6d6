import { displayPrefix, generateApiKey, hashApiKey, isWellFormedApiKey } from './api-key.format';

describe('api key format', () => {
  it('generates th_live_ keys of 32 random base62 characters plus a checksum', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^th_live_[0-9A-Za-z]{38}$/);
    expect(isWellFormedApiKey(key)).toBe(true);
  });

  it('generates distinct keys', () => {
    const keys = new Set(Array.from({ length: 1000 }, generateApiKey));
    expect(keys.size).toBe(1000);
  });

  it('rejects a key with one character changed (checksum)', () => {
    const key = generateApiKey();
    for (let i = 8; i < key.length; i++) {
      const c = key[i] === 'a' ? 'b' : 'a';
      const bad = key.slice(0, i) + c + key.slice(i + 1);
      expect(isWellFormedApiKey(bad)).toBe(false);
    }
  });

  it.each(['', 'th_live_', 'th_test_' + 'a'.repeat(38), 'th_live_' + 'a'.repeat(37), 'th_live_' + '!'.repeat(38), 'Bearer x'])(
    'rejects malformed key %j',
    (key) => expect(isWellFormedApiKey(key)).toBe(false),
  );

  it('hashes with SHA-256 hex and shows only a short prefix', () => {
    const key = generateApiKey();
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(displayPrefix(key)).toHaveLength(16);
    expect(key.startsWith(displayPrefix(key))).toBe(true);
  });
});
