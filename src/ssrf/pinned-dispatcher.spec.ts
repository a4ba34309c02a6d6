import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { request } from 'undici';
import { createPinnedDispatcher, PinnedDispatcher, pinnedLookup } from './pinned-dispatcher';
import { StaticDnsResolver } from './resolver';
import { CheckedDestination, SsrfPolicy } from './ssrf-policy';

interface Seen {
  path: string;
  host: string | undefined;
  servername: string | false | null;
  connection: number;
}

describe('createPinnedDispatcher (real HTTPS server on 127.0.0.1)', () => {
  let dir: string;
  let ca: string;
  let server: Server;
  let port: number;
  let seen: Seen[];
  let connections: number;
  const pinned: PinnedDispatcher[] = [];

  const make = (opts: Parameters<typeof createPinnedDispatcher>[0] = { ca }) => {
    const p = createPinnedDispatcher(opts);
    pinned.push(p);
    return p;
  };
  const dest = (host: string, addresses: string[], path = '/'): CheckedDestination => ({
    url: new URL(`https://${host.includes(':') ? `[${host}]` : host}:${port}${path}`),
    host,
    port,
    addresses,
  });

  beforeAll(async () => {
    // Node cannot mint X.509 certificates; openssl makes a throwaway self-signed one.
    dir = mkdtempSync(join(tmpdir(), 'ssrf-pinned-'));
    execFileSync(
      'openssl',
      [
        'req', '-x509', '-newkey', 'rsa:2048', '-nodes',
        '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
        '-subj', '/CN=hooks.test', '-addext', 'subjectAltName=DNS:hooks.test,IP:127.0.0.1', '-days', '1',
      ],
      { stdio: 'ignore' },
    );
    ca = readFileSync(join(dir, 'cert.pem'), 'utf8');
    server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: ca }, (req, res) => {
      const socket = req.socket as TLSSocket & { connId?: number };
      seen.push({ path: req.url ?? '', host: req.headers.host, servername: socket.servername, connection: socket.connId ?? -1 });
      if (req.url === '/redirect') {
        res.writeHead(302, { location: `https://hooks.test:${port}/target` }).end('moved');
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      }
    });
    server.on('secureConnection', (socket: TLSSocket & { connId?: number }) => {
      socket.connId = ++connections;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  beforeEach(() => {
    seen = [];
    connections = 0;
  });

  afterAll(async () => {
    await Promise.all(pinned.map((p) => p.destroy()));
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('reaches the pinned address with Host/SNI = original host, verified against the custom CA', async () => {
    const d = dest('hooks.test', ['127.0.0.1']); // hooks.test has no DNS record: no lookup happens
    const res = await request(d.url, { dispatcher: make().dispatcherFor(d) });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('ok');
    expect(seen).toEqual([{ path: '/', host: `hooks.test:${port}`, servername: 'hooks.test', connection: 1 }]);
  });

  it('returns a 302 as a 302 and does not follow it', async () => {
    const d = dest('hooks.test', ['127.0.0.1'], '/redirect');
    const res = await request(d.url, { method: 'POST', body: '{}', dispatcher: make().dispatcherFor(d) });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe(`https://hooks.test:${port}/target`);
    await res.body.text();
    expect(seen.map((s) => s.path)).toEqual(['/redirect']);
  });

  it('rejects the self-signed certificate without the custom CA', async () => {
    const d = dest('hooks.test', ['127.0.0.1']);
    await expect(request(d.url, { dispatcher: make({}).dispatcherFor(d) })).rejects.toMatchObject({
      code: expect.stringMatching(/SELF_SIGNED|UNABLE_TO_VERIFY/),
    });
    expect(seen).toEqual([]);
  });

  it('still trusts the public roots when a custom CA is given (certificate name is checked)', async () => {
    // The cert is for hooks.test/127.0.0.1; pinning "other.test" to the same server must fail TLS.
    const d = dest('other.test', ['127.0.0.1']);
    await expect(request(d.url, { dispatcher: make().dispatcherFor(d) })).rejects.toMatchObject({
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
  });

  it('omits SNI for an IP-literal destination and verifies the IP SAN', async () => {
    const d = dest('127.0.0.1', ['127.0.0.1']);
    const res = await request(d.url, { dispatcher: make().dispatcherFor(d) });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    expect(seen[0]).toMatchObject({ host: `127.0.0.1:${port}`, servername: false });
  });

  it('keeps connections alive across requests to the same checked destination', async () => {
    // connections: 1 makes the pool deterministic (no second socket opened in a race).
    const p = make({ ca, connections: 1 });
    for (let i = 0; i < 3; i++) {
      const d = dest('hooks.test', ['127.0.0.1']); // fresh CheckedDestination each attempt
      const res = await request(d.url, { dispatcher: p.dispatcherFor(d) });
      await res.body.text();
    }
    expect(seen.map((s) => s.connection)).toEqual([1, 1, 1]);
    expect(connections).toBe(1);
    expect(p.size).toBe(1);
  });

  it('uses a separate pool when the checked addresses change (no socket reuse across a DNS change)', async () => {
    const p = make();
    const a = p.dispatcherFor(dest('hooks.test', ['127.0.0.1', '2001:db8::1']));
    expect(p.dispatcherFor(dest('hooks.test', ['2001:db8::1', '127.0.0.1']))).toBe(a);
    expect(p.dispatcherFor(dest('hooks.test', ['127.0.0.1']))).not.toBe(a);
    expect(p.size).toBe(2);
  });

  it('connects only to the pinned address (nothing listens on 127.0.0.2:port)', async () => {
    const d = dest('hooks.test', ['127.0.0.2']);
    await expect(request(d.url, { dispatcher: make().dispatcherFor(d) })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(seen).toEqual([]);
  });

  it('turns a connect that fails synchronously into a rejected request, not a process crash', async () => {
    // 127.255.255.255 is the broadcast address of lo's 127.0.0.0/8: the kernel refuses a TCP
    // connect to it inside connect(2) (ENETUNREACH, nothing is sent), exactly like an IPv6-only
    // address on a host without an IPv6 route. A lookup that called back synchronously made
    // tls.connect throw and left the failed socket to emit 'error' with no listener: the process died.
    const d = dest('hooks.test', ['127.255.255.255']);
    const p = make();
    for (let i = 0; i < 2; i++) {
      await expect(request(d.url, { method: 'POST', body: '{}', dispatcher: p.dispatcherFor(d) })).rejects.toMatchObject({ code: 'ENETUNREACH' });
    }
    // The dispatcher still works afterwards.
    const ok = dest('hooks.test', ['127.0.0.1']);
    const res = await request(ok.url, { dispatcher: p.dispatcherFor(ok) });
    expect(res.statusCode).toBe(200);
    await res.body.text();
  });

  it('fails closed when asked for a host it was not pinned to', async () => {
    const d = dest('hooks.test', ['127.0.0.1']);
    const dispatcher = make().dispatcherFor(d);
    await expect(request(`https://evil.test:${port}/`, { dispatcher })).rejects.toMatchObject({ code: 'ERR_SSRF_PIN_MISMATCH' });
    await expect(request(`https://127.0.0.1:${port}/`, { dispatcher })).rejects.toThrow();
    expect(seen).toEqual([]);
  });

  it('works end to end with SsrfPolicy (allow-listed local receiver, static DNS)', async () => {
    const policy = new SsrfPolicy({ allowCidrs: '127.0.0.1/32' }, new StaticDnsResolver({ 'hooks.test': ['127.0.0.1'] }));
    const checked = await policy.checkUrl(`https://HOOKS.test.:${port}/`, { allowNonstandardPort: true });
    const res = await request(checked.url, { method: 'POST', body: '{"a":1}', dispatcher: make().dispatcherFor(checked) });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    expect(seen[0]).toMatchObject({ host: `hooks.test:${port}`, servername: 'hooks.test' });
  });

  it('evicts least recently used pools but keeps them usable for a grace period', async () => {
    const p = make({ ca, maxDestinations: 1 });
    const first = dest('hooks.test', ['127.0.0.1']);
    const d1 = p.dispatcherFor(first);
    p.dispatcherFor(dest('127.0.0.1', ['127.0.0.1']));
    expect(p.size).toBe(1);
    const res = await request(first.url, { dispatcher: d1 });
    expect(res.statusCode).toBe(200);
    await res.body.text();
  });

  it.each<[string, Partial<CheckedDestination>]>([
    ['no addresses', { addresses: [] }],
    ['a non-IP address', { addresses: ['hooks.test'] }],
    ['an IP literal pinned elsewhere', { host: '127.0.0.1', addresses: ['10.0.0.1'] }],
    ['a bad port', { port: 0 }],
  ])('refuses to build a dispatcher for %s', (_name, patch) => {
    expect(() => make().dispatcherFor({ ...dest('hooks.test', ['127.0.0.1']), ...patch })).toThrow(/dispatcherFor/);
  });
});

describe('pinnedLookup', () => {
  const lookup = pinnedLookup('hooks.test', ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']);
  const call = (host: string, options: object) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
      lookup(host, options, (err, address, family) => resolve({ err, address, family })),
    );

  it('answers all pinned addresses for all:true', async () => {
    expect(await call('hooks.test', { all: true })).toMatchObject({
      err: null,
      address: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
      ],
    });
  });

  it('answers the first pinned address of the requested family', async () => {
    expect(await call('hooks.test', {})).toMatchObject({ err: null, address: '93.184.216.34', family: 4 });
    expect(await call('HOOKS.test.', { family: 6 })).toMatchObject({ err: null, address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 });
    expect(await call('hooks.test', { family: 'IPv4', all: true })).toMatchObject({ address: [{ address: '93.184.216.34', family: 4 }] });
  });

  it('always calls back asynchronously, like dns.lookup (net/tls attach their listeners after the lookup starts)', () => {
    const calls: string[] = [];
    lookup('hooks.test', { all: true }, () => calls.push('answer'));
    lookup('hooks.test', {}, () => calls.push('answer'));
    lookup('evil.test', {}, () => calls.push('refusal'));
    pinnedLookup('a.test', ['8.8.8.8'])('a.test', { family: 6 }, () => calls.push('not found'));
    expect(calls).toEqual([]);
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        expect(calls).toEqual(['answer', 'answer', 'refusal', 'not found']);
        resolve();
      }),
    );
  });

  it('fails closed for any other host', async () => {
    const { err } = await call('evil.test', { all: true });
    expect(err).toMatchObject({ code: 'ERR_SSRF_PIN_MISMATCH' });
  });

  it('reports ENOTFOUND when no pinned address has the requested family', async () => {
    const v4only = pinnedLookup('a.test', ['8.8.8.8']);
    const err = await new Promise((resolve) => v4only('a.test', { family: 6 }, (e) => resolve(e)));
    expect(err).toMatchObject({ code: 'ENOTFOUND' });
  });
});
