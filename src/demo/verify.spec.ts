import { Webhook } from 'standardwebhooks';
import { buildDeliveryHeaders } from '../delivery/signer';
import { generateWebhookSecret } from '../delivery/secret';
import { verifyWebhookSignature } from './verify';

/** The demo's node:crypto verifier agrees with the official Standard Webhooks library both ways. */
describe('demo signature verification', () => {
  const secret = generateWebhookSecret();
  const body = JSON.stringify({ type: 'trends.surge', timestamp: '2026-03-03T13:05:00.000Z', data: { count: 27, note: 'ünïcode ✔' } });
  const now = Math.floor(Date.now() / 1000);

  it('accepts what standardwebhooks signs, and standardwebhooks accepts what trendhooks signs', () => {
    const wh = new Webhook(secret);
    const signed = { 'webhook-id': 'msg_a', 'webhook-timestamp': String(now), 'webhook-signature': wh.sign('msg_a', new Date(now * 1000), body) };
    expect(verifyWebhookSignature(secret, signed, body, now)).toEqual({ ok: true });

    const ours = buildDeliveryHeaders('msg_b', now, body, [secret]);
    expect(verifyWebhookSignature(secret, ours, body, now)).toEqual({ ok: true });
    expect(wh.verify(body, ours)).toEqual(JSON.parse(body));
  });

  it('accepts either signature during a rotation', () => {
    const old = generateWebhookSecret();
    const headers = buildDeliveryHeaders('msg_c', now, body, [secret, old]);
    expect(verifyWebhookSignature(old, headers, body, now)).toEqual({ ok: true });
    expect(verifyWebhookSignature(secret, headers, body, now)).toEqual({ ok: true });
  });

  it('refuses what standardwebhooks refuses: another body, id, secret, or a stale timestamp', () => {
    const wh = new Webhook(secret);
    const headers = buildDeliveryHeaders('msg_d', now, body, [secret]);
    const cases: [string, Record<string, string>, string, string][] = [
      ['body', headers, body.replace('27', '28'), secret],
      ['id', { ...headers, 'webhook-id': 'msg_e' }, body, secret],
      ['secret', headers, body, generateWebhookSecret()],
      ['timestamp', buildDeliveryHeaders('msg_f', now - 3600, body, [secret]), body, secret],
      ['signature', { ...headers, 'webhook-signature': 'v1,AAAA' }, body, secret],
    ];
    for (const [what, h, b, s] of cases) {
      expect({ what, ours: verifyWebhookSignature(s, h, b, now).ok }).toEqual({ what, ours: false });
      expect({ what, theirs: (() => { try { new Webhook(s).verify(b, h); return true; } catch { return false; } })() }).toEqual({ what, theirs: false });
    }
    expect(wh.verify(body, headers)).toBeTruthy();
    expect(verifyWebhookSignature(secret, { 'webhook-id': 'msg_g' }, body, now)).toEqual({ ok: false, reason: expect.stringMatching(/missing/) });
  });
});
