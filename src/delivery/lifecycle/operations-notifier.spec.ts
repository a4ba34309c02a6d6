import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret } from '../secret';
import { OperationsNotifier } from './operations-notifier';
import type { WebhookDisabledEvent } from '../../events/webhook-disabled';

const EVENT: WebhookDisabledEvent = { id: '01KJSX4M8G0000000000000001', customer_id: 'cus_1', url: 'https://hooks.test/in', reason: 'gone', disabled_at: '2026-03-08T13:05:00.000Z' };

describe('OperationsNotifier', () => {
  let server: Server;
  let got: { headers: IncomingHttpHeaders; body: string }[];
  let statuses: number[];
  let notifier: OperationsNotifier | undefined;
  const secret = generateWebhookSecret();

  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(new Logger()));

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

  it('posts a signed webhook.disabled, tried again under the same id until a 2xx', async () => {
    statuses = [503, 500];
    notifier = new OperationsNotifier({ url: url(), secret, retryDelaysMs: [5, 5, 5] });
    await notifier.notify(EVENT);
    expect(got).toHaveLength(3);
    expect(new Set(got.map((g) => g.headers['webhook-id'])).size).toBe(1);
    for (const g of got) {
      expect(new Webhook(secret).verify(g.body, g.headers as Record<string, string>)).toEqual({ type: 'webhook.disabled', timestamp: EVENT.disabled_at, data: EVENT });
    }
  });

  it("stamps and signs each attempt at the injected clock's time, not the system's", async () => {
    statuses = [503];
    const times = [new Date('2026-03-08T13:05:01.900Z'), new Date('2026-03-08T13:05:02.000Z')];
    let call = 0;
    notifier = new OperationsNotifier({ url: url(), secret, retryDelaysMs: [5], clock: { now: () => times[Math.min(call++, times.length - 1)] } });
    await notifier.notify(EVENT);
    expect(got.map((g) => g.headers['webhook-timestamp'])).toEqual(['1772975101', '1772975102']);
    for (const g of got) {
      const at = new Date(Number(g.headers['webhook-timestamp']) * 1000);
      expect(g.headers['webhook-signature']).toBe(new Webhook(secret).sign(g.headers['webhook-id'] as string, at, g.body));
    }
  });

  it('gives up after its attempts without throwing', async () => {
    statuses = [500, 500, 500];
    notifier = new OperationsNotifier({ url: url(), secret, retryDelaysMs: [5, 5] });
    await expect(notifier.notify(EVENT)).resolves.toBeUndefined();
    expect(got).toHaveLength(3);
  });
});
