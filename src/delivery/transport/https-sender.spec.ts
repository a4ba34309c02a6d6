import type { IncomingMessage, ServerResponse } from 'node:http';
import * as https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { makeEcCert } from '../../../test/support/chaos-receiver';
import type { TestCert } from '../../../test/support/receiver';
import type { CheckedDestination } from '../../ssrf/ssrf-policy';
import { HttpsSender, RESPONSE_EXCERPT_BYTES } from './https-sender';

/**
 * The sender against a real HTTPS server on 127.0.0.1: what an attempt answers for each way a
 * receiver can answer (or not), and that its time limit holds wherever the exchange is.
 */
describe('HttpsSender', () => {
  let cert: TestCert;
  let server: https.Server;
  let dest: CheckedDestination;
  let handle: (req: IncomingMessage, res: ServerResponse) => void;
  const sockets = new Set<Socket>();
  let sender: HttpsSender;

  beforeAll(async () => {
    cert = makeEcCert();
    server = https.createServer({ key: cert.key, cert: cert.cert }, (req, res) => handle(req, res));
    server.on('secureConnection', (s: Socket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    dest = { url: new URL(`https://127.0.0.1:${port}/hook?x=1`), host: '127.0.0.1', port, addresses: ['127.0.0.1'] };
  });

  beforeEach(() => {
    sender = new HttpsSender({ ca: cert.cert, connectTimeoutMs: 2000, connections: 2 });
  });

  afterEach(async () => {
    for (const s of sockets) s.destroy();
    await sender.close().catch(() => undefined);
  });

  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  const post = (timeoutMs = 2000) => sender.post(dest, { 'content-type': 'application/json', 'webhook-id': 'msg_1' }, '{"a":1}', timeoutMs);

  it('sends the body and headers to the path and query, and answers the status and body', async () => {
    let seen: { url?: string; method?: string; id?: string; body: string } = { body: '' };
    handle = (req, res) => {
      seen = { url: req.url, method: req.method, id: req.headers['webhook-id'] as string, body: '' };
      req.on('data', (c) => (seen.body += c));
      req.on('end', () => res.writeHead(200).end('ok'));
    };
    await expect(post()).resolves.toEqual({ statusCode: 200, excerpt: 'ok', retryAfter: undefined });
    expect(seen).toEqual({ url: '/hook?x=1', method: 'POST', id: 'msg_1', body: '{"a":1}' });
  });

  it('keeps the first KiB of a longer body, cut on a character boundary, and answers Retry-After', async () => {
    handle = (req, res) => {
      req.resume();
      res.writeHead(503, { 'retry-after': '7' });
      res.write('a');
      res.end('é'.repeat(3000)); // 2-byte characters: byte 1024 falls inside one
    };
    const r = await post();
    expect(r.statusCode).toBe(503);
    expect(r.retryAfter).toBe('7');
    expect(Buffer.byteLength(r.excerpt)).toBe(RESPONSE_EXCERPT_BYTES - 1);
    expect(r.excerpt).toBe('a' + 'é'.repeat(511));
  });

  it('answers the final status after a 1xx informational response', async () => {
    handle = (req, res) => {
      req.resume();
      res.writeEarlyHints({ link: '</style.css>; rel=preload' }, () => res.writeHead(202).end('later'));
    };
    await expect(post()).resolves.toMatchObject({ statusCode: 202, excerpt: 'later' });
  });

  it('stops reading an endless body past the drain limit and answers its status', async () => {
    let closed!: Promise<void>;
    handle = (req, res) => {
      req.resume();
      closed = new Promise((r) => res.on('close', () => r()));
      res.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    };
    const r = await post();
    expect(r.statusCode).toBe(200);
    expect(r.excerpt).toBe('x'.repeat(RESPONSE_EXCERPT_BYTES));
    await closed; // the socket was closed, not left streaming
  });

  it('answers the status when the body stalls past the time limit', async () => {
    handle = (req, res) => {
      req.resume();
      res.writeHead(200);
      res.write('partial'); // and never ends
    };
    const t0 = performance.now();
    await expect(post(300)).resolves.toMatchObject({ statusCode: 200, excerpt: 'partial' });
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('answers the status when the connection is cut during the body', async () => {
    handle = (req, res) => {
      req.resume();
      res.writeHead(500, { 'content-length': '100' });
      res.write('half', () => res.socket?.destroy());
    };
    await expect(post()).resolves.toMatchObject({ statusCode: 500, excerpt: 'half' });
  });

  it('rejects with a TimeoutError when no status arrives in time', async () => {
    handle = (req) => req.resume(); // never answers
    const t0 = performance.now();
    await expect(post(300)).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(performance.now() - t0).toBeLessThan(1500);
  });

  it('rejects at its time limit while waiting for a free connection, and never sends after it', async () => {
    const arrived: string[] = [];
    handle = (req) => {
      arrived.push(req.headers['webhook-id'] as string);
      req.resume(); // holds both connections
    };
    const first = [post(1500), post(1500)].map((p) => p.catch((e: Error) => e.name));
    await new Promise((r) => setTimeout(r, 100));
    const t0 = performance.now();
    const queued = sender.post(dest, { 'webhook-id': 'msg_queued' }, '{}', 200);
    await expect(queued).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(await Promise.all(first)).toEqual(['TimeoutError', 'TimeoutError']);
    await new Promise((r) => setTimeout(r, 100));
    expect(arrived).not.toContain('msg_queued');
  });

  it('rejects with the connection error when the connection is cut before a status', async () => {
    handle = (req) => {
      req.resume();
      req.socket.destroy();
    };
    await expect(post()).rejects.toBeInstanceOf(Error);
  });
});
