import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import type { PrivateDestinationsService } from '../../auth/private-destinations.service';
import { TestDnsServer } from '../../../test/support/dns-server';
import { DnsResolver, StaticDnsResolver, SystemDnsResolver } from '../../ssrf/resolver';
import { PrivateGrant, SsrfPolicy } from '../../ssrf/ssrf-policy';
import { generateWebhookSecret } from '../secret';
import { SendOutcome, TransportRequest } from './delivery-transport';
import { HttpsWebhookTransport } from './https-webhook.transport';

/** No customer here has private grants (loopback is never grantable; the secrets e2e suite covers grants). */
class FakePrivateDestinations {
  async forCustomer(): Promise<PrivateGrant[]> {
    return [];
  }
}

describe('HttpsWebhookTransport', () => {
  let dir: string;
  let ca: string;
  let server: Server;
  let port: number;
  let received: { path: string; headers: Record<string, string | string[] | undefined>; body: string }[];
  const transports: HttpsWebhookTransport[] = [];
  const secret = generateWebhookSecret();
  const now = new Date();

  beforeAll(async () => {
    // Node cannot mint X.509 certificates; openssl makes a throwaway self-signed one.
    dir = mkdtempSync(join(tmpdir(), 'https-transport-'));
    execFileSync(
      'openssl',
      [
        'req', '-x509', '-newkey', 'rsa:2048', '-nodes',
        '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
        '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1',
      ],
      { stdio: 'ignore' },
    );
    ca = readFileSync(join(dir, 'cert.pem'), 'utf8');
    server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: ca }, (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        received.push({ path: req.url ?? '', headers: req.headers, body });
        if (req.url === '/ok') res.writeHead(204).end();
        else if (req.url === '/fail') res.writeHead(500, { 'content-type': 'text/plain' }).end('receiver broke');
        else if (req.url === '/busy') res.writeHead(429, { 'retry-after': '7' }).end('slow down');
        else if (req.url === '/reset') req.socket.destroy();
        // '/hang' never answers.
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  beforeEach(() => {
    received = [];
  });

  afterAll(async () => {
    await Promise.all(transports.map((t) => t.onApplicationShutdown()));
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  /** A transport whose SSRF policy lets exactly the test server through (unless `open` is false). */
  function transport(opts: { open?: boolean; resolver?: DnsResolver; dnsLookupsPerCustomer?: number } = {}): HttpsWebhookTransport {
    const privateDestinations = new FakePrivateDestinations();
    const ssrf = new SsrfPolicy({ allowDestinations: opts.open === false ? '' : `127.0.0.1:${port}` }, opts.resolver ?? new StaticDnsResolver({ 'gone.test': [] }));
    const t = new HttpsWebhookTransport(ssrf, privateDestinations as unknown as PrivateDestinationsService, { now: () => now }, { ca, timeoutMs: 2000, dnsLookupsPerCustomer: opts.dnsLookupsPerCustomer });
    transports.push(t);
    return t;
  }

  function request(url: string, over: Partial<TransportRequest> = {}): TransportRequest & { calls: string[] } {
    const calls: string[] = [];
    return {
      calls,
      deliveryId: 'msg_t5sjhza3k36pmzx225g3sfwfad',
      attempt: 1,
      destination: { webhookId: 'wh_1', customerId: 'cus_1', url, allowNonstandardPort: true },
      timeoutMs: 2000,
      confirm: async () => (calls.push('confirm'), true),
      body: () => (calls.push('body'), '{"type":"trends.surge","data":{"n":1}}'),
      secrets: () => (calls.push('secrets'), [secret]),
      ...over,
    };
  }

  const url = (path: string) => `https://127.0.0.1:${port}${path}`;
  const failure = (o: SendOutcome) => (o.kind === 'transient' || o.kind === 'permanent' ? o : fail(`not a failure: ${JSON.stringify(o)}`));

  it('delivers on a 2xx, signed so a Standard Webhooks receiver verifies it', async () => {
    const out = await transport().send(request(url('/ok')));
    expect(out).toEqual({ kind: 'delivered', statusCode: 204, excerpt: '', durationMs: expect.any(Number) });
    expect(received).toHaveLength(1);
    const [r] = received;
    expect(r.headers['webhook-timestamp']).toBe(String(Math.floor(now.getTime() / 1000)));
    expect(() => new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
  });

  it('fails after the response on a 500: transient, with the status and the start of the body', async () => {
    const out = failure(await transport().send(request(url('/fail'))));
    expect(out).toMatchObject({ kind: 'transient', stage: 'after_response', errorClass: 'http_500', statusCode: 500, excerpt: 'receiver broke', retryAfterMs: null });
  });

  it("passes a 429's Retry-After on as the receiver's requested wait", async () => {
    const out = failure(await transport().send(request(url('/busy'))));
    expect(out).toMatchObject({ stage: 'after_response', errorClass: 'http_429', statusCode: 429, retryAfterMs: 7000 });
  });

  it('fails during the exchange when the receiver resets the connection', async () => {
    const out = failure(await transport().send(request(url('/reset'))));
    expect(out).toMatchObject({ kind: 'transient', stage: 'during', errorClass: 'connection_reset', statusCode: null });
    expect(out.excerpt).toMatch(/^\w+ \w+: /);
  });

  it('fails during the exchange when the receiver does not answer in time', async () => {
    const out = failure(await transport().send(request(url('/hang'), { timeoutMs: 200 })));
    expect(out).toMatchObject({ kind: 'transient', stage: 'during', errorClass: 'timeout', statusCode: null });
  });

  it('fails before connecting when the SSRF policy refuses the destination, building and decrypting nothing', async () => {
    const req = request(url('/ok'));
    const out = failure(await transport({ open: false }).send(req));
    expect(out).toMatchObject({ kind: 'permanent', stage: 'before_connect', errorClass: 'destination_blocked', statusCode: null, retryAfterMs: null });
    expect(out.excerpt).toContain('127.0.0.1');
    expect(req.calls).toEqual([]);
    expect(received).toEqual([]);
  });

  it('fails before connecting, transient, when the host does not resolve', async () => {
    const out = failure(await transport().send(request(`https://gone.test:${port}/ok`)));
    expect(out).toMatchObject({ kind: 'transient', stage: 'before_connect', errorClass: 'dns_failure', statusCode: null });
  });

  it("fails at once, transient dns_failure, past the customer's share of lookups waiting on DNS; other customers keep theirs", async () => {
    const dns = await TestDnsServer.start({}, { blackHole: (name) => name.endsWith('.blackhole.test') });
    try {
      const t = transport({ resolver: new SystemDnsResolver({ servers: [dns.address], hostsFile: null, timeoutMs: 800 }), dnsLookupsPerCustomer: 1 });
      const hanging = t.send(request(`https://a0.blackhole.test:${port}/ok`));
      const t0 = performance.now();
      const req = request(`https://a1.blackhole.test:${port}/ok`);
      const out = failure(await t.send(req));
      expect(performance.now() - t0).toBeLessThan(100);
      expect(out).toMatchObject({ kind: 'transient', stage: 'before_connect', errorClass: 'dns_failure', statusCode: null, retryAfterMs: null });
      expect(out.excerpt).toContain('too many DNS lookups in progress for this customer (at most 1 at once)');
      expect(req.calls).toEqual([]);
      expect(dns.queriesFor('a1.blackhole.test')).toBe(0);
      // Another customer's lookup is its own.
      const other = t.send(request(`https://b0.blackhole.test:${port}/ok`, { destination: { webhookId: 'wh_2', customerId: 'cus_2', url: `https://b0.blackhole.test:${port}/ok`, allowNonstandardPort: true } }));
      for (const o of await Promise.all([hanging, other])) expect(failure(o)).toMatchObject({ errorClass: 'dns_failure', excerpt: expect.stringContaining('timed out') });
      // The place is free again once the lookup ended.
      expect(failure(await t.send(request(`https://a2.blackhole.test:${port}/ok`))).excerpt).toContain('timed out');
    } finally {
      await dns.close();
    }
  });

  it('sends nothing when the webhook is gone by the time the destination is checked', async () => {
    const req = request(url('/ok'), { confirm: async () => false });
    expect(await transport().send(req)).toEqual({ kind: 'cancelled' });
    expect(req.calls).toEqual([]);
    expect(received).toEqual([]);
  });

  it('records a secret that cannot be used as a failure before connecting, not a throw', async () => {
    const out = failure(await transport().send(request(url('/ok'), { secrets: () => ['not-a-secret'] })));
    expect(out).toMatchObject({ kind: 'transient', stage: 'before_connect', errorClass: 'network_error' });
    expect(received).toEqual([]);
  });
});
