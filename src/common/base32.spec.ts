import { createHash } from 'node:crypto';
import { crockfordBase32 } from './base32';

/** Independent re-derivation: the top `chars * 5` bits of the bytes as one BigInt, 5 bits at a time. */
function viaBigInt(bytes: Buffer, chars: number): string {
  const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
  const n = BigInt(`0x${bytes.toString('hex')}`) >> BigInt(bytes.length * 8 - chars * 5);
  let out = '';
  for (let i = chars - 1; i >= 0; i--) out += alphabet[Number((n >> BigInt(i * 5)) & 31n)];
  return out;
}

describe('crockfordBase32', () => {
  it('encodes known bytes most significant bit first', () => {
    expect(crockfordBase32(Buffer.from([0xff, 0xff]), 3)).toBe('zzz');
    expect(crockfordBase32(Buffer.from([0x00, 0x44]), 3)).toBe('012');
    expect(crockfordBase32(Buffer.from([0x08]), 1)).toBe('1');
  });

  it('never uses i, l, o or u and agrees with a BigInt re-derivation on SHA-256 digests', () => {
    for (let i = 0; i < 200; i++) {
      const digest = createHash('sha256').update(`k${i}`).digest();
      const got = crockfordBase32(digest, 26);
      expect(got).toMatch(/^[0-9a-hjkmnp-tv-z]{26}$/);
      expect(got).toBe(viaBigInt(digest, 26));
    }
  });

  it('stops at the requested length', () => {
    expect(crockfordBase32(Buffer.alloc(32, 0xab), 5)).toHaveLength(5);
  });
});
