import { CursorCodec, CursorKeyRing } from '../../src/pagination/cursor-codec';
import { testDatabases } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';

/**
 * 10,000 mutated cursors: bit flips, truncations, splices, re-encodings and re-signings with a
 * wrong key. Each is refused with 400 INVALID_CURSOR — through the codec for the bulk, and a
 * sample through HTTP to prove the route answers the same way.
 */
const MUTATIONS = Number(process.env.CURSOR_MUTATIONS ?? 10_000);
const HTTP_SAMPLE = Number(process.env.CURSOR_HTTP_SAMPLE ?? 300);

/** Seeded, so a failure reproduces. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { nextInt: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)) };
}

function mutate(token: string, rnd: ReturnType<typeof prng>): string {
  const bytes = Buffer.from(token, 'utf8');
  switch (rnd.nextInt(0, 6)) {
    case 0: {
      const i = rnd.nextInt(0, bytes.length - 1);
      bytes[i] ^= 1 << rnd.nextInt(0, 6);
      return bytes.toString('utf8');
    }
    case 1:
      return token.slice(0, rnd.nextInt(0, token.length - 1));
    case 2: {
      const i = rnd.nextInt(0, token.length);
      return token.slice(0, i) + String.fromCharCode(rnd.nextInt(33, 126)) + token.slice(i);
    }
    case 3: {
      const parts = token.split('.');
      parts.reverse();
      return parts.join('.');
    }
    case 4: {
      // Re-sign the payload with a key the server does not hold.
      const [payload, keyId] = token.split('.');
      return `${payload}.${keyId}.${Buffer.from(String(rnd.nextInt(0, 1e9))).toString('base64url')}`;
    }
    case 5: {
      const [payload, ...rest] = token.split('.');
      const json = Buffer.from(payload, 'base64url').toString('utf8').replace(/"c":"[^"]*"/, '"c":"cus_other"');
      return [Buffer.from(json).toString('base64url'), ...rest].join('.');
    }
    default:
      return token + token.slice(rnd.nextInt(0, token.length - 1));
  }
}

describe.each(testDatabases())('mutated cursors on %s', (_name, makeDb) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(makeDb(), { env: { PLAN_RATE_LIMITS: 'business=100000000' } });
  });
  afterAll(() => t?.close());

  it(`refuses ${MUTATIONS} mutated cursors with INVALID_CURSOR`, async () => {
    const c = await t.customer();
    for (let i = 0; i < 3; i++) await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/x', event: 'trends.surge', subreddit: 'cursors' });
    const first = await t.http().get('/v1/webhooks?limit=1').set(c.auth);
    const token: string = first.body.meta.page.next_cursor;
    expect(typeof token).toBe('string');

    const expected = { route: 'webhooks.list', customerId: c.customerId, params: {} };
    const codec = new CursorCodec(CursorKeyRing.fromSecrets(t.config.cursor.secrets), { ttlSeconds: 86400 });
    expect(codec.decode(token, expected, new Date())).toBeTruthy(); // the original is valid

    const rnd = prng(20261122);
    const mutated = new Set<string>();
    while (mutated.size < MUTATIONS) {
      const m = mutate(token, rnd);
      if (m !== token) mutated.add(m);
    }
    let refused = 0;
    for (const m of mutated) {
      try {
        codec.decode(m, expected, new Date());
      } catch (err) {
        if ((err as { code?: string }).code === 'INVALID_CURSOR') refused++;
        else throw err;
      }
    }
    expect(refused).toBe(mutated.size);

    const sample = [...mutated].slice(0, HTTP_SAMPLE);
    for (const m of sample) {
      const res = await t.http().get('/v1/webhooks').query({ cursor: m }).set(c.auth);
      expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'INVALID_CURSOR' });
    }
  }, 120_000);
});
