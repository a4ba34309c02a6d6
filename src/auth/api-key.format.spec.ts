import { createHash } from 'node:crypto';
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

  it('keeps the stored hashes: SHA-256 of the key text as UTF-8, lower-case hex', () => {
    // Stored keys are looked up by this hash: any other digest or encoding would lock every caller out.
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const key = generateApiKey();
    expect(hashApiKey(key)).toBe(createHash('sha256').update(Buffer.from(key, 'utf8')).digest('hex'));
  });
});
