import { Webhook as StandardWebhook } from 'standardwebhooks';
import { generateWebhookSecret } from '../secret';
import { signDelivery } from './delivery-transport';

describe('signDelivery', () => {
  const at = new Date('2026-01-02T03:04:05.678Z');
  const body = '{"type":"trends.surge","data":{"count":1}}';

  it('builds the body and the Standard Webhooks headers a receiver verifies', () => {
    const secret = generateWebhookSecret();
    const signed = signDelivery({ deliveryId: 'msg_1', body: () => body, secrets: () => [secret] }, at);
    expect(signed.body).toBe(body);
    expect(signed.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)) });
    const wh = new StandardWebhook(secret);
    // standardwebhooks checks the timestamp against its own clock: sign now for the check.
    const now = signDelivery({ deliveryId: 'msg_1', body: () => body, secrets: () => [secret] }, new Date());
    expect(wh.verify(now.body, now.headers)).toEqual(JSON.parse(body));
  });

  it('signs with every secret valid at `at` (a rotation), asking for them at that time', () => {
    const [a, b] = [generateWebhookSecret(), generateWebhookSecret()];
    const asked: Date[] = [];
    const signed = signDelivery({ deliveryId: 'msg_2', body: () => body, secrets: (when) => (asked.push(when), [a, b]) }, new Date());
    expect(signed.headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const s of [a, b]) expect(new StandardWebhook(s).verify(signed.body, signed.headers)).toEqual(JSON.parse(body));
    expect(asked).toHaveLength(1);
  });
});
