import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

/** A self-signed certificate for 127.0.0.1 and receiver.test, made with openssl once per test file. */
export interface TestCert {
  dir: string;
  key: string;
  cert: string;
  caFile: string;
}

export function makeCert(): TestCert {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-cert-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=receiver.test',
      '-addext', 'subjectAltName=DNS:receiver.test,IP:127.0.0.1'],
    { stdio: 'ignore' },
  );
  return { dir, key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8'), caFile: certFile };
}

export interface Received {
  n: number;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait before answering. */
  delayMs?: number;
  /** Never answer (the sender's timeout must fire). */
  hang?: boolean;
  /** Cut the connection without an answer. */
  reset?: boolean;
}

/** A real HTTPS receiver on 127.0.0.1: records every request and answers as the test scripts it. */
export class Receiver {
  readonly received: Received[] = [];
  private sockets = new Set<Socket>();
  private waiters: { pred: () => boolean; resolve: () => void }[] = [];
  behaviour: (req: Received) => Reply = () => ({ status: 200 });

  private constructor(private readonly server: https.Server) {}

  static async start(cert: TestCert): Promise<Receiver> {
    const server = https.createServer({ key: cert.key, cert: cert.cert, keepAlive: true });
    const r = new Receiver(server);
    server.on('connection', (s: Socket) => {
      r.sockets.add(s);
      s.on('close', () => r.sockets.delete(s));
    });
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const rec: Received = { n: r.received.length + 1, path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        r.received.push(rec);
        const reply = r.behaviour(rec);
        r.notify();
        if (reply.hang) return;
        if (reply.reset) return req.socket.destroy();
        const send = () => {
          res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain', ...reply.headers });
          res.end(reply.body ?? 'ok');
        };
        if (reply.delayMs) setTimeout(send, reply.delayMs);
        else send();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return r;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** URL by IP literal (works with the system resolver, e.g. from a child process). */
  url(p = '/hook'): string {
    return `https://127.0.0.1:${this.port}${p}`;
  }

  /** URL by name: the test DNS maps receiver.test to 127.0.0.1, and the certificate names it (SNI). */
  namedUrl(p = '/hook'): string {
    return `https://receiver.test:${this.port}${p}`;
  }

  private notify(): void {
    this.waiters = this.waiters.filter((w) => {
      if (!w.pred()) return true;
      w.resolve();
      return false;
    });
  }

  /** Resolves once `pred` holds over what was received; rejects after `timeoutMs`. */
  waitUntil(pred: (received: Received[]) => boolean, timeoutMs = 15_000, what = 'condition'): Promise<void> {
    if (pred(this.received)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`receiver: timed out waiting for ${what} (got ${this.received.length} requests)`)), timeoutMs);
      this.waiters.push({ pred: () => pred(this.received), resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  waitForCount(n: number, timeoutMs?: number): Promise<void> {
    return this.waitUntil((r) => r.length >= n, timeoutMs, `${n} requests`);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(() => r(undefined)));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
