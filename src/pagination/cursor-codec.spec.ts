import { createHash, createHmac } from 'node:crypto';
import { AppError } from '../common/errors';
import {
  CURSOR_ERROR_MESSAGES,
  CursorCodec,
  CursorKeyRing,
  DEFAULT_CURSOR_TTL_SECONDS,
  MAX_CURSOR_TOKEN_LENGTH,
  deriveCursorKeyId,
  hashCursorParams,
  parseCursorSecrets,
} from './cursor-codec';

const SECRET_A = 'a'.repeat(16) + 'secret-for-tests-0001';
const SECRET_B = 'b'.repeat(16) + 'secret-for-tests-0002';
const NOW = new Date('2025-06-01T12:00:00.000Z');
const TTL = DEFAULT_CURSOR_TTL_SECONDS;

const ROUTE = 'GET /v1/subreddits/:subreddit/posts';
const EXPECTED = { route: ROUTE, customerId: 'cus_1', params: { subreddit: 'typescript' } };
const INPUT = { ...EXPECTED, position: [1748779200000, 'post_01J'], direction: 'next' as const };

function codecWith(...secrets: string[]): CursorCodec {
  return new CursorCodec(CursorKeyRing.fromSecrets(secrets), { ttlSeconds: TTL });
}

/** Asserts decode throws INVALID_CURSOR, optionally with a specific reason. */
function expectInvalid(fn: () => unknown, message?: string): void {
  let thrown: unknown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(AppError);
  const err = thrown as AppError;
  expect(err.code).toBe('INVALID_CURSOR');
  expect(err.status).toBe(400);
  if (message !== undefined) expect(err.message).toBe(message);
}

/** Signs an arbitrary payload exactly like the codec does, to test the post-signature checks. */
function signRaw(secret: string, payload: unknown, rawBytes?: Buffer): string {
  const keyId = deriveCursorKeyId(secret);
  const payloadB64 = (rawBytes ?? Buffer.from(JSON.stringify(payload), 'utf8')).toString('base64url');
  const sig = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`v1.${keyId}.${payloadB64}`).digest('base64url');
  return `${payloadB64}.${keyId}.${sig}`;
}

const nowSec = Math.floor(NOW.getTime() / 1000);
const validPayload = {
  v: 1,
  r: ROUTE,
  c: 'cus_1',
  p: hashCursorParams(EXPECTED.params),
  k: [1, 'x'],
  d: 'next',
  e: nowSec + 60,
};

describe('CursorCodec', () => {
  const codec = codecWith(SECRET_A);
  const token = codec.encode(INPUT, NOW);

  it('round-trips position and direction', () => {
    expect(codec.decode(token, EXPECTED, NOW)).toEqual({ position: INPUT.position, direction: 'next' });
    const prev = codec.encode({ ...INPUT, position: ['only-string'], direction: 'prev' }, NOW);
    expect(codec.decode(prev, EXPECTED, NOW)).toEqual({ position: ['only-string'], direction: 'prev' });
  });

  it('emits a compact base64url token of three segments without raw params', () => {
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[0-9a-f]{8}\.[A-Za-z0-9_-]{43}$/);
    const payload = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString('utf8'));
    expect(payload).toEqual({
      v: 1,
      r: ROUTE,
      c: 'cus_1',
      p: hashCursorParams(EXPECTED.params),
      k: INPUT.position,
      d: 'next',
      e: nowSec + TTL,
    });
    expect(token).not.toContain(Buffer.from('typescript').toString('base64url'));
  });

  it('is deterministic across restarts (same secrets → same key id and token)', () => {
    expect(codecWith(SECRET_A).encode(INPUT, NOW)).toBe(token);
    expect(token.split('.')[1]).toBe(deriveCursorKeyId(SECRET_A));
  });

  it('accepts the cursor until just before expiry, rejects it from expiry on', () => {
    expect(() => codec.decode(token, EXPECTED, new Date(NOW.getTime() + (TTL - 1) * 1000))).not.toThrow();
    expectInvalid(() => codec.decode(token, EXPECTED, new Date(NOW.getTime() + TTL * 1000)), CURSOR_ERROR_MESSAGES.expired);
    expectInvalid(() => codec.decode(token, EXPECTED, new Date(NOW.getTime() + 2 * TTL * 1000)), 'cursor has expired');
  });

  it('rejects empty, oversized and garbage input', () => {
    expectInvalid(() => codec.decode('', EXPECTED, NOW), 'cursor is empty');
    expectInvalid(() => codec.decode(undefined as unknown as string, EXPECTED, NOW), 'cursor is empty');
    expectInvalid(() => codec.decode('x'.repeat(MAX_CURSOR_TOKEN_LENGTH + 1), EXPECTED, NOW), 'cursor is too long');
    for (const garbage of ['garbage', 'a.b', 'a.b.c.d', '...', '!!!.abcd1234.???', '%%%', 'é.é.é', 'null', '{"v":1}']) {
      expectInvalid(() => codec.decode(garbage, EXPECTED, NOW));
    }
  });

  it('rejects not-base64url segments', () => {
    const [p, k, s] = token.split('.');
    expectInvalid(() => codec.decode(`${p}=.${k}.${s}`, EXPECTED, NOW), 'cursor is malformed');
    expectInvalid(() => codec.decode(`${p.replace(/-/g, '+')}+/.${k}.${s}`, EXPECTED, NOW), 'cursor is malformed');
    expectInvalid(() => codec.decode(`${p}.${k}.${s}=`, EXPECTED, NOW), 'cursor is malformed');
    expectInvalid(() => codec.decode(`${p}. ${k}.${s}`, EXPECTED, NOW), 'cursor is malformed');
  });

  it('rejects every single-character change at every position', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ';
    let tried = 0;
    for (let i = 0; i < token.length; i++) {
      const replacements = new Set<string>(alphabet);
      // Every single-bit flip of the character, too.
      for (let bit = 0; bit < 7; bit++) replacements.add(String.fromCharCode(token.charCodeAt(i) ^ (1 << bit)));
      replacements.delete(token[i]);
      for (const c of replacements) {
        const mutated = token.slice(0, i) + c + token.slice(i + 1);
        expectInvalid(() => codec.decode(mutated, EXPECTED, NOW));
        tried++;
      }
    }
    expect(tried).toBeGreaterThan(token.length * 60);
  });

  it('rejects the token truncated at every length', () => {
    for (let n = 0; n < token.length; n++) {
      expectInvalid(() => codec.decode(token.slice(0, n), EXPECTED, NOW));
    }
  });

  it('rejects extra segments and extra characters', () => {
    for (const t of [`${token}.`, `${token}.x`, `.${token}`, `${token}.${token}`, `${token}A`, `A${token}`, `${token}\n`]) {
      expectInvalid(() => codec.decode(t, EXPECTED, NOW));
    }
  });

  it('rejects a cursor for another route, customer or route parameters, with the reason', () => {
    expectInvalid(
      () => codec.decode(token, { ...EXPECTED, route: 'GET /v1/users/:username/posts' }, NOW),
      'cursor was issued for another route',
    );
    expectInvalid(() => codec.decode(token, { ...EXPECTED, customerId: 'cus_2' }, NOW), 'cursor was issued for another customer');
    expectInvalid(
      () => codec.decode(token, { ...EXPECTED, params: { subreddit: 'javascript' } }, NOW),
      'cursor was issued for other route parameters',
    );
    expectInvalid(
      () => codec.decode(token, { ...EXPECTED, params: { subreddit: 'typescript', extra: '' } }, NOW),
      'cursor was issued for other route parameters',
    );
    expectInvalid(() => codec.decode(token, { ...EXPECTED, params: {} }, NOW), 'cursor was issued for other route parameters');
  });

  it('rotation: old-key tokens verify while the old key is in the ring, and fail once it is retired', () => {
    const old = codecWith(SECRET_A).encode(INPUT, NOW);
    const rotated = codecWith(SECRET_B, SECRET_A);
    expect(rotated.decode(old, EXPECTED, NOW)).toEqual({ position: INPUT.position, direction: 'next' });

    const fresh = rotated.encode(INPUT, NOW);
    expect(fresh.split('.')[1]).toBe(deriveCursorKeyId(SECRET_B));
    expect(codecWith(SECRET_B).decode(fresh, EXPECTED, NOW).position).toEqual(INPUT.position);

    expectInvalid(() => codecWith(SECRET_B).decode(old, EXPECTED, NOW), 'cursor was signed with an unknown or retired key');
  });

  it('rejects a token whose key id is known but whose signature was made with another key', () => {
    const keyIdA = deriveCursorKeyId(SECRET_A);
    const forged = signRaw(SECRET_B, validPayload).split('.');
    expectInvalid(() => codec.decode(`${forged[0]}.${keyIdA}.${forged[2]}`, EXPECTED, NOW), 'cursor signature is invalid');
  });

  describe('validly signed payloads of the wrong shape', () => {
    it('accepts the well-formed reference payload (sanity check of signRaw)', () => {
      expect(codec.decode(signRaw(SECRET_A, validPayload), EXPECTED, NOW)).toEqual({ position: [1, 'x'], direction: 'next' });
    });

    const cases: Array<[string, unknown]> = [
      ['not an object: array', [validPayload]],
      ['not an object: string', 'hello'],
      ['not an object: number', 42],
      ['null', null],
      ['missing field', (({ d: _d, ...rest }) => rest)(validPayload)],
      ['extra field', { ...validPayload, x: 1 }],
      ['__proto__ field', JSON.parse(JSON.stringify(validPayload).replace('{', '{"__proto__":{"v":1},'))],
      ['route not a string', { ...validPayload, r: 1 }],
      ['empty route', { ...validPayload, r: '' }],
      ['customer not a string', { ...validPayload, c: ['cus_1'] }],
      ['params hash not a hash', { ...validPayload, p: 'typescript' }],
      ['params hash wrong type', { ...validPayload, p: 7 }],
      ['position not an array', { ...validPayload, k: '1,x' }],
      ['empty position', { ...validPayload, k: [] }],
      ['position with object', { ...validPayload, k: [{}] }],
      ['position with null', { ...validPayload, k: [null] }],
      ['position with boolean', { ...validPayload, k: [true] }],
      ['position too long', { ...validPayload, k: Array.from({ length: 9 }, (_, i) => i) }],
      ['direction unknown', { ...validPayload, d: 'first' }],
      ['direction missing value', { ...validPayload, d: null }],
      ['expiry as string', { ...validPayload, e: String(nowSec + 60) }],
      ['expiry fractional', { ...validPayload, e: nowSec + 60.5 }],
      ['expiry negative', { ...validPayload, e: -1 }],
    ];
    it.each(cases)('%s → cursor payload is malformed', (_name, payload) => {
      expectInvalid(() => codec.decode(signRaw(SECRET_A, payload), EXPECTED, NOW), 'cursor payload is malformed');
    });

    it('rejects non-JSON bytes and invalid UTF-8 under a valid signature', () => {
      expectInvalid(() => codec.decode(signRaw(SECRET_A, null, Buffer.from('{"v":1,')), EXPECTED, NOW), 'cursor payload is malformed');
      expectInvalid(() => codec.decode(signRaw(SECRET_A, null, Buffer.from([0xff, 0xfe, 0x7b, 0x7d])), EXPECTED, NOW), 'cursor payload is malformed');
    });

    it.each([[2], [0], ['1'], [null], [undefined]])('version %p → cursor version is not supported', (v) => {
      expectInvalid(() => codec.decode(signRaw(SECRET_A, { ...validPayload, v }), EXPECTED, NOW), 'cursor version is not supported');
    });
  });

  describe('encode guards (programming errors, plain Error)', () => {
    it.each([
      ['empty route', { ...INPUT, route: '' }],
      ['empty customer', { ...INPUT, customerId: '' }],
      ['empty position', { ...INPUT, position: [] }],
      ['NaN in position', { ...INPUT, position: [Number.NaN] }],
      ['bad direction', { ...INPUT, direction: 'sideways' as 'next' }],
      ['non-string param', { ...INPUT, params: { subreddit: 1 as unknown as string } }],
      ['huge position', { ...INPUT, position: ['x'.repeat(2000)] }],
    ])('%s', (_name, input) => {
      expect(() => codec.encode(input, NOW)).toThrow(Error);
      expect(() => codec.encode(input, NOW)).not.toThrow(AppError);
    });

    it('rejects a bad ttl and an invalid Date', () => {
      expect(() => new CursorCodec(CursorKeyRing.fromSecrets([SECRET_A]), { ttlSeconds: 0 })).toThrow(/ttlSeconds/);
      expect(() => new CursorCodec(CursorKeyRing.fromSecrets([SECRET_A]), { ttlSeconds: 1.5 })).toThrow(/ttlSeconds/);
      expect(() => codec.encode(INPUT, new Date(Number.NaN))).toThrow(/invalid Date/);
    });
  });
});

describe('hashCursorParams', () => {
  it('is independent of key order, sensitive to values, 22 base64url chars', () => {
    expect(hashCursorParams({ a: '1', b: '2' })).toBe(hashCursorParams({ b: '2', a: '1' }));
    expect(hashCursorParams({ a: '1' })).not.toBe(hashCursorParams({ a: '2' }));
    // Canonical pairs keep "a=1,b" and "a,1=b"-style collisions apart.
    expect(hashCursorParams({ 'a","b': 'c' })).not.toBe(hashCursorParams({ a: 'b","c' }));
    expect(hashCursorParams({})).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('is the truncated SHA-256 of the canonical pairs, the same when kept and after many other params went by', () => {
    const expected = createHash('sha256').update(JSON.stringify([['subreddit', 'typescript']]), 'utf8').digest().subarray(0, 16).toString('base64url');
    expect(hashCursorParams({ subreddit: 'typescript' })).toBe(expected);
    expect(hashCursorParams({ subreddit: 'typescript' })).toBe(expected);
    for (let i = 0; i < 5000; i++) hashCursorParams({ subreddit: `s${i}` });
    expect(hashCursorParams({ subreddit: 'typescript' })).toBe(expected);
    expect(() => hashCursorParams({ subreddit: 1 as unknown as string })).toThrow('cursor param "subreddit" must be a string');
  });
});

describe('CursorKeyRing', () => {
  it('signs with the first key and verifies with all', () => {
    const ring = CursorKeyRing.fromSecrets([SECRET_B, SECRET_A]);
    expect(ring.signingKey.id).toBe(deriveCursorKeyId(SECRET_B));
    expect(ring.keyIds).toEqual([deriveCursorKeyId(SECRET_B), deriveCursorKeyId(SECRET_A)]);
    expect(ring.find(deriveCursorKeyId(SECRET_A))?.secret.toString()).toBe(SECRET_A);
    expect(ring.find('nope')).toBeUndefined();
  });

  it('rejects short secrets, empty rings, duplicate and unsafe key ids', () => {
    expect(() => CursorKeyRing.fromSecrets(['short'])).toThrow(/at least 32/);
    expect(() => CursorKeyRing.fromSecrets(['x'.repeat(31)])).toThrow(/at least 32/);
    expect(() => CursorKeyRing.fromSecrets(['x'.repeat(32)])).not.toThrow();
    expect(() => CursorKeyRing.fromSecrets([])).toThrow(/at least one key/);
    expect(() => CursorKeyRing.fromSecrets([SECRET_A, SECRET_A])).toThrow(/twice/);
    expect(() => new CursorKeyRing([{ id: 'a.b', secret: Buffer.alloc(32, 1) }])).toThrow(/key id/);
    expect(() => new CursorKeyRing([{ id: 'k1', secret: Buffer.alloc(31, 1) }])).toThrow(/shorter than 32/);
  });

  it('does not echo the short secret in the error', () => {
    expect(() => CursorKeyRing.fromSecrets(['hunter2'])).toThrow(expect.objectContaining({ message: expect.not.stringContaining('hunter2') }));
  });
});

describe('parseCursorSecrets', () => {
  it('splits the comma list, trims, ignores empty entries', () => {
    expect(parseCursorSecrets(`${SECRET_B}, ${SECRET_A} ,`)).toEqual([SECRET_B, SECRET_A]);
    expect(parseCursorSecrets(SECRET_A)).toEqual([SECRET_A]);
  });

  it('rejects empty, short and duplicate entries with a clear error', () => {
    expect(() => parseCursorSecrets('')).toThrow(/at least one secret/);
    expect(() => parseCursorSecrets(' , ')).toThrow(/at least one secret/);
    expect(() => parseCursorSecrets(`${SECRET_A},tooshort`)).toThrow('CURSOR_SECRET entry #2 has 8 characters; at least 32 are required');
    expect(() => parseCursorSecrets(`${SECRET_A},${SECRET_A}`)).toThrow(/twice/);
  });
});
