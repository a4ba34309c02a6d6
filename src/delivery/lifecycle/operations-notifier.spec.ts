import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { webhookDisabledBody, WebhookDisabledEvent } from '../../events/webhook-disabled';
import { generateWebhookSecret } from '../secret';
import { OperationsNotifier } from './operations-notifier';

const EVENT: WebhookDisabledEvent = { id: '01KJSX4M8G0000000000000001', customer_id: 'cus_1', url: 'https://hooks.test/in', reason: 'gone', disabled_at: '2026-03-08T13:05:00.000Z' };
const MSG = 'msg_t5sjhza3k36pmzx225g3sfwfad';

describe('OperationsNotifier', () => {
  let server: Server;
  let got: { headers: IncomingHttpHeaders; body: string }[];
  let statuses: number[];
  let notifier: OperationsNotifier | undefined;
  const secret = generateWebhookSecret();

  beforeEach(async () => {
    got = [];
    statuses = [];
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        got.push({ headers: req.headers, body });
        res.writeHead(statuses.shift() ?? 200).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterEach(async () => {
    await notifier?.close();
    await new Promise((r) => server.close(r));
  });

  const url = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/ops`;

  it('posts a signed webhook.disabled under the id it is given, folded disables in its data', async () => {
    notifier = new OperationsNotifier({ url: url(), secret });
    const folded = { count: 2, first_disabled_at: '2026-03-08T12:05:00.000Z', gone: 2, failing: 0 };
    expect(await notifier.send(MSG, webhookDisabledBody(EVENT, folded))).toBeNull();
    expect(got[0].headers['webhook-id']).toBe(MSG);
    expect(new Webhook(secret).verify(got[0].body, got[0].headers as Record<string, string>)).toEqual({ type: 'webhook.disabled', timestamp: EVENT.disabled_at, data: { ...EVENT, folded } });
  });

  it("stamps and signs each attempt at the injected clock's time, not the system's", async () => {
    const at = new Date('2026-03-08T13:05:01.900Z');
    notifier = new OperationsNotifier({ url: url(), secret, clock: { now: () => at } });
    await notifier.send(MSG, webhookDisabledBody(EVENT));
    expect(got[0].headers['webhook-timestamp']).toBe('1772975101');
    expect(got[0].headers['webhook-signature']).toBe(new Webhook(secret).sign(MSG, new Date(1772975101_000), got[0].body));
  });

  it('answers why an attempt failed, without throwing', async () => {
    statuses = [503];
    notifier = new OperationsNotifier({ url: url(), secret });
    expect(await notifier.send(MSG, webhookDisabledBody(EVENT))).toBe('HTTP 503');
    await notifier.close();
    notifier = new OperationsNotifier({ url: 'http://127.0.0.1:1/ops', secret, timeoutMs: 500 });
    expect(await notifier.send(MSG, webhookDisabledBody(EVENT))).toEqual(expect.any(String));
  });
});
