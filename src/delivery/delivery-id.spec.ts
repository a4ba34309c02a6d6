import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { deliveryId, DELIVERY_ID_RE } from './delivery-id';

const PINNED = 'msg_t5sjhza3k36pmzx225g3sfwfad';

describe('deliveryId', () => {
  it('has the documented format: msg_ + 26 lower-case Crockford base32 chars', () => {
    const id = deliveryId('01JEVENT0000000000000000000', '01JWEBHOOK000000000000000000');
    expect(id).toMatch(/^msg_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(id).toMatch(DELIVERY_ID_RE);
    expect(id).toHaveLength(30);
  });

  it('is deterministic (same on every retry, restart or duplicate fan-out)', () => {
    expect(deliveryId('evt_1', 'wh_1')).toBe(deliveryId('evt_1', 'wh_1'));
    // Pinned value: a change of algorithm would break receivers' deduplication across deploys.
    expect(deliveryId('evt_1', 'wh_1')).toBe(PINNED);
  });

  it('differs per event and per webhook, and is order-sensitive', () => {
    const ids = new Set([
      deliveryId('evt_1', 'wh_1'),
      deliveryId('evt_2', 'wh_1'),
      deliveryId('evt_1', 'wh_2'),
      deliveryId('wh_1', 'evt_1'),
    ]);
    expect(ids.size).toBe(4);
  });

  it('is separator-safe', () => {
    expect(deliveryId('ab', 'c')).not.toBe(deliveryId('a', 'bc'));
    expect(deliveryId('a\0', 'b')).not.toBe(deliveryId('a', '\0b'));
    expect(deliveryId('a:1', 'b')).not.toBe(deliveryId('a', ':1b'));
    expect(deliveryId('1:a', 'b')).not.toBe(deliveryId('1', 'a:b'));
  });

  it('encodes the leading bits of the SHA-256 in Crockford order', () => {
    // Independent re-derivation: base32 of the first 130 bits via BigInt.
    const hash = createHash('sha256')
      .update('trendhooks/delivery-id/v1\0')
      .update('5:evt_1\0')
      .update('4:wh_1')
      .digest();
    const n = BigInt(`0x${hash.toString('hex')}`) >> BigInt(256 - 130);
    const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
    let expected = '';
    for (let i = 25; i >= 0; i--) expected += alphabet[Number((n >> BigInt(i * 5)) & 31n)];
    expect(deliveryId('evt_1', 'wh_1')).toBe(`msg_${expected}`);
  });

  it('handles non-ASCII ids', () => {
    expect(deliveryId('évt', 'wh')).toMatch(DELIVERY_ID_RE);
    expect(deliveryId('évt', 'wh')).not.toBe(deliveryId('evt', 'wh'));
  });

  it.each([
    ['', 'wh'],
    ['evt', ''],
    [undefined as unknown as string, 'wh'],
  ])('rejects empty ids (%p, %p)', (e, w) => {
    expect(() => deliveryId(e, w)).toThrow(Error);
  });

  it('property: always well-formed; equal iff the pair is equal', () => {
    const id = fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' });
    fc.assert(
      fc.property(id, id, id, id, (e1, w1, e2, w2) => {
        expect(deliveryId(e1, w1)).toMatch(DELIVERY_ID_RE);
        const same = e1 === e2 && w1 === w2;
        expect(deliveryId(e1, w1) === deliveryId(e2, w2)).toBe(same);
      }),
    );
  });
});
