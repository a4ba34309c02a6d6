import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { decodeWebhookSecret, generateWebhookSecret } from './secret';
import { buildDeliveryHeaders, DELIVERY_USER_AGENT, signPayload } from './signer';

const nowS = () => Math.floor(Date.now() / 1000);
const BODY = JSON.stringify({
  type: 'trend.spike',
  timestamp: '2025-01-02T03:04:05.000Z',
  data: { event_id: 'evt_1', webhook_id: 'wh_1', subreddit: 'rust', score: 42, note: 'héllo 🚀' },
});
const MSG_ID = 'msg_0123456789abcdefghjkmnpqrs';

type Verifier = { verify(payload: string, headers: Record<string, string>): unknown };
const receivers: Array<[string, (secret: string) => Verifier]> = [
  ['standardwebhooks', (s) => new StandardWebhook(s)],
  ['svix', (s) => new SvixWebhook(s)],
];

describe('secret', () => {
  it('generates whsec_ + base64 of 32 random bytes', () => {
    const s = generateWebhookSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(decodeWebhookSecret(s)).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(s);
  });

  it('decodes to the raw key', () => {
    const key = Buffer.alloc(32, 7);
    expect(decodeWebhookSecret(`whsec_${key.toString('base64')}`).equals(key)).toBe(true);
  });

  it.each([
    ['missing prefix', Buffer.alloc(32).toString('base64')],
    ['wrong prefix', `whsek_${Buffer.alloc(32).toString('base64')}`],
    ['empty key', 'whsec_'],
    ['invalid characters', 'whsec_abc$defg'],
    ['url-safe alphabet', 'whsec_ab-_'],
    ['bad padding', 'whsec_abc'],
    ['whitespace', 'whsec_ YWJj'],
    ['not a string', 42 as unknown as string],
  ])('rejects %s', (_label, secret) => {
    expect(() => decodeWebhookSecret(secret)).toThrow(Error);
  });
});

describe('signPayload / buildDeliveryHeaders', () => {
  const secretA = generateWebhookSecret();
  const secretB = generateWebhookSecret();

  it('builds the Standard Webhooks header set', () => {
    const ts = nowS();
    const headers = buildDeliveryHeaders(MSG_ID, ts, BODY, [secretA]);
    expect(headers).toEqual({
      'content-type': 'application/json',
      'user-agent': DELIVERY_USER_AGENT,
      'webhook-id': MSG_ID,
      'webhook-timestamp': String(ts),
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]{43}=$/),
    });
    expect(DELIVERY_USER_AGENT).toBe('trendhooks-webhooks/1');
  });

  it('is HMAC-SHA256 of "id.timestamp.body" keyed by the decoded secret', () => {
    const ts = 1_700_000_000;
    const expected = createHmac('sha256', decodeWebhookSecret(secretA))
      .update(`${MSG_ID}.${ts}.${BODY}`)
      .digest('base64');
    expect(signPayload({ msgId: MSG_ID, timestamp: ts, body: BODY, secrets: [secretA] })).toBe(`v1,${expected}`);
  });

  it("equals the reference library's own sign()", () => {
    const ts = 1_700_000_000;
    const reference = new StandardWebhook(secretA).sign(MSG_ID, new Date(ts * 1000), BODY);
    expect(signPayload({ msgId: MSG_ID, timestamp: ts, body: BODY, secrets: [secretA] })).toBe(reference);
  });

  it('carries two space-separated signatures during a rotation', () => {
    const sig = signPayload({ msgId: MSG_ID, timestamp: nowS(), body: BODY, secrets: [secretA, secretB] });
    expect(sig).toMatch(/^v1,\S+ v1,\S+$/);
  });

  it('signs once when both rotation secrets are the same', () => {
    const sig = signPayload({ msgId: MSG_ID, timestamp: nowS(), body: BODY, secrets: [secretA, secretA] });
    expect(sig.split(' ')).toHaveLength(1);
  });

  it('is stable for repeated calls (key cache) and differs per secret', () => {
    const input = { msgId: MSG_ID, timestamp: 1_700_000_000, body: BODY };
    const a1 = signPayload({ ...input, secrets: [secretA] });
    const a2 = signPayload({ ...input, secrets: [secretA] });
    const b = signPayload({ ...input, secrets: [secretB] });
    expect(a1).toBe(a2);
    expect(b).not.toBe(a1);
  });

  it.each([
    ['no secrets', { secrets: [] as string[] }],
    ['three secrets', { secrets: ['a', 'b', 'c'] }],
    ['a malformed secret', { secrets: ['not-a-secret'] }],
    ['a malformed second secret', { secrets: ['whsec_YWJj', 'whsec_%%'] }],
    ['a fractional timestamp', { timestamp: 1.5 }],
    ['a negative timestamp', { timestamp: -1 }],
    ['a NaN timestamp', { timestamp: Number.NaN }],
    ['an empty msgId', { msgId: '' }],
  ])('throws on %s', (_label, override) => {
    const input = { msgId: MSG_ID, timestamp: 1_700_000_000, body: BODY, secrets: [secretA], ...override };
    expect(() => signPayload(input)).toThrow(Error);
    // A rejected secret is not cached: it fails again the same way.
    expect(() => signPayload(input)).toThrow(Error);
  });

  describe.each(receivers)('verified by %s', (_lib, receiver) => {
    it('accepts the exact body', () => {
      const headers = buildDeliveryHeaders(MSG_ID, nowS(), BODY, [secretA]);
      expect(receiver(secretA).verify(BODY, headers)).toEqual(JSON.parse(BODY));
    });

    it('accepts upper-case header names too', () => {
      const headers = buildDeliveryHeaders(MSG_ID, nowS(), BODY, [secretA]);
      const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
      expect(() => receiver(secretA).verify(BODY, upper)).not.toThrow();
    });

    it('rejects a tampered body', () => {
      const headers = buildDeliveryHeaders(MSG_ID, nowS(), BODY, [secretA]);
      expect(() => receiver(secretA).verify(BODY.replace('42', '43'), headers)).toThrow();
      expect(() => receiver(secretA).verify(`${BODY} `, headers)).toThrow();
    });

    it('rejects a wrong secret', () => {
      const headers = buildDeliveryHeaders(MSG_ID, nowS(), BODY, [secretA]);
      expect(() => receiver(secretB).verify(BODY, headers)).toThrow();
    });

    it('rejects a changed webhook-id or webhook-timestamp', () => {
      const ts = nowS();
      const headers = buildDeliveryHeaders(MSG_ID, ts, BODY, [secretA]);
      expect(() => receiver(secretA).verify(BODY, { ...headers, 'webhook-id': 'msg_other' })).toThrow();
      expect(() => receiver(secretA).verify(BODY, { ...headers, 'webhook-timestamp': String(ts - 1) })).toThrow();
    });

    it('rejects a timestamp older than 5 minutes', () => {
      const headers = buildDeliveryHeaders(MSG_ID, nowS() - 301, BODY, [secretA]);
      expect(() => receiver(secretA).verify(BODY, headers)).toThrow(/too old/);
    });

    it('rejects a timestamp more than 5 minutes ahead', () => {
      const headers = buildDeliveryHeaders(MSG_ID, nowS() + 301, BODY, [secretA]);
      expect(() => receiver(secretA).verify(BODY, headers)).toThrow(/too new/);
    });

    it('accepts either secret while both sign a rotation, and no third one', () => {
      const headers = buildDeliveryHeaders(MSG_ID, nowS(), BODY, [secretA, secretB]);
      expect(() => receiver(secretA).verify(BODY, headers)).not.toThrow();
      expect(() => receiver(secretB).verify(BODY, headers)).not.toThrow();
      expect(() => receiver(generateWebhookSecret()).verify(BODY, headers)).toThrow();
    });

    it('verifies non-ASCII and empty-object bodies', () => {
      for (const body of ['{"data":{"title":"日本語 ✓ \\u2028"}}', '{}']) {
        const headers = buildDeliveryHeaders(MSG_ID, nowS(), body, [secretA]);
        expect(receiver(secretA).verify(body, headers)).toEqual(JSON.parse(body));
      }
    });
  });
});
