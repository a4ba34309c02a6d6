import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { runListen } from '../src/demo/listen';
import { buildDeliveryHeaders } from '../src/delivery/signer';
import { generateWebhookSecret } from '../src/webhooks/secret';

/**
 * `trendhooks listen` as a receiver: real HTTPS on 127.0.0.1 with its own certificate, signatures
 * checked with the webhook's secret, verified deliveries forwarded to a plain-HTTP app whose answer
 * becomes trendhooks' answer. (The README test covers it end to end with a running trendhooks.)
 * No database is involved, so this suite runs once.
 */
async function freePort(): Promise<number> {
  const srv = http.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

function post(port: number, ca: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: '/hooks', method: 'POST', headers, ca }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('trendhooks listen', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-listen-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('answers 401 to a bad signature, forwards verified deliveries as received, and answers with the app\'s status', async () => {
    const secret = generateWebhookSecret();
    const forwarded: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    let appStatus = 503;
    const app = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        forwarded.push({ headers: req.headers, body });
        res.writeHead(appStatus).end();
      });
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    const appUrl = new URL(`http://localhost:${(app.address() as AddressInfo).port}/webhooks`);

    const port = await freePort();
    const out: string[] = [];
    const err: string[] = [];
    const done = runListen({ port, dir, secrets: [secret], forwardTo: appUrl, count: 1, json: false, out: (l) => out.push(l), err: (l) => err.push(l) });
    // The certificate is made on first use; the receiver is up once it says where it listens.
    for (let i = 0; i < 200 && !err.some((l) => l.startsWith('listening on')); i++) await new Promise((r) => setTimeout(r, 50));
    const ca = fs.readFileSync(path.join(dir, 'receiver-cert.pem'), 'utf8');
    expect(err).toContain(`  export SSRF_ALLOW_DESTINATIONS=127.0.0.1:${port}`);

    const body = JSON.stringify({ type: 'trends.surge', timestamp: new Date().toISOString(), data: { subreddit: 'typescript', count: 42 } });
    const now = Math.floor(Date.now() / 1000);
    const good = buildDeliveryHeaders('msg_listentest0000000000000001', now, body, [secret]);
    const wrong = buildDeliveryHeaders('msg_listentest0000000000000002', now, body, [generateWebhookSecret()]);

    expect(await post(port, ca, wrong, body)).toBe(401);
    expect(forwarded).toHaveLength(0); // never forwarded unverified
    expect(err.join('\n')).toMatch(/✘ .* — webhook-id msg_listentest0000000000000002, signature NOT verified \(no v1 signature matches\)/);

    // The app fails: trendhooks is told so (it would retry), and listen keeps going.
    expect(await post(port, ca, good, body)).toBe(503);
    appStatus = 204;
    expect(await post(port, ca, good, body)).toBe(204);
    await done; // --count 1: stops after the first delivery the app accepted

    expect(forwarded).toHaveLength(2);
    expect(forwarded[1].body).toBe(body);
    expect(forwarded[1].headers).toMatchObject({ 'webhook-id': good['webhook-id'], 'webhook-timestamp': good['webhook-timestamp'], 'webhook-signature': good['webhook-signature'] });
    expect(out.join('\n')).toMatch(/✔ .* trends\.surge r\/typescript — webhook-id msg_listentest0000000000000001, signature verified/);
    expect(out.join('\n')).toContain(`→ ${appUrl.href}: 204`);
    expect(err).toContain('stopped after 1 verified delivery');
    await new Promise<void>((resolve) => app.close(() => resolve()));
  }, 60_000);
});
