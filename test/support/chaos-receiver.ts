import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import * as https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestCert } from './receiver';

/**
 * Like makeCert, but ECDSA P-256: resets and hangs make the sender open hundreds of TLS
 * connections, and an RSA-2048 handshake costs ten times the CPU on a machine that is busy anyway.
 */
export function makeEcCert(): TestCert {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-chaos-cert-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2',
      '-subj', '/CN=receiver.test', '-addext', 'subjectAltName=DNS:receiver.test,IP:127.0.0.1'],
    { stdio: 'ignore' },
  );
  return { dir, key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8'), caFile: certFile };
}

/** What the chaos receiver can do with one request. */
export const CHAOS_KINDS = [
  'ok', // 2xx at once
  'slow', // 2xx after a short wait, well inside the sender's timeout
  'http500',
  'http500_retry_after', // a Retry-After the policy must ignore (only 429 and 503 count)
  'http503',
  'http503_retry_after',
  'http429',
  'http429_retry_after',
  'permanent', // 400, 404 or 422
  'redirect', // 301 or 302 with a Location the sender must never follow
  'hang', // never answers: the sender's timeout must fire
  'reset', // the connection is cut without an answer
] as const;
export type ChaosKind = (typeof CHAOS_KINDS)[number];

export interface ChaosAnswer {
  kind: ChaosKind;
  /** The status answered (absent for hang and reset). */
  status?: number;
  /** The Retry-After header sent, if any. */
  retryAfter?: string;
  /** Wait before answering (slow). */
  delayMs?: number;
}

export interface ChaosArrival {
  /** The webhook-id header. */
  msgId: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** 0 for the first request of this webhook-id, 1 for the second… (arrival order). */
  index: number;
  /** Date.now() when the whole request had arrived. */
  at: number;
  answer: ChaosAnswer;
  /** Date.now() when the answer was written or the connection cut; unset for a hang. */
  answeredAt?: number;
  /** Retry-After as an absolute time: the next attempt may not start before it (429/503 only). */
  notBefore?: number;
  /** Hang only: when the sender gave up and closed the connection. */
  abandonedAt?: number;
}

/** The decision for one request: which kind, and a second uniform draw for its details. */
export type ChaosDecider = (req: { path: string; msgId: string; index: number; body: string }) => { kind: ChaosKind; detail: number };

/** Uniform [0, 1) from a SHA-256 of the key: reproducible per seed whatever the arrival order. */
export function hash01(key: string): number {
  return createHash('sha256').update(key).digest().readUInt32BE(0) / 2 ** 32;
}

/** Picks a key of `weights` with probability proportional to its weight, from u in [0, 1). */
export function pickWeighted<K extends string>(weights: Record<K, number>, u: number): K {
  const entries = Object.entries(weights) as [K, number][];
  const total = entries.reduce((s, [, w]) => s + w, 0);
  let x = u * total;
  for (const [k, w] of entries) {
    if (x < w) return k;
    x -= w;
  }
  return entries[entries.length - 1][0];
}

/** The concrete answer of a kind; `detail` in [0, 1) picks its variant (status, delay, header form). */
function answerFor(kind: ChaosKind, detail: number, now: number): { answer: ChaosAnswer; notBefore?: (answeredAt: number) => number } {
  const of = <T>(xs: readonly T[]) => xs[Math.min(xs.length - 1, Math.floor(detail * xs.length))];
  switch (kind) {
    case 'ok':
      return { answer: { kind, status: of([200, 201, 202, 204]) } };
    case 'slow':
      return { answer: { kind, status: 200, delayMs: 40 + Math.floor(detail * 160) } };
    case 'http500':
      return { answer: { kind, status: 500 } };
    case 'http500_retry_after':
      return { answer: { kind, status: 500, retryAfter: '1' } };
    case 'http503':
      return { answer: { kind, status: 503 } };
    case 'http429':
      return { answer: { kind, status: 429 } };
    case 'http503_retry_after':
    case 'http429_retry_after': {
      const status = kind === 'http503_retry_after' ? 503 : 429;
      // Delta-seconds 0 or 1, or (503 only) an IMF-fixdate one to two seconds ahead.
      if (status === 503 && detail >= 2 / 3) {
        const at = (Math.floor(now / 1000) + 2) * 1000;
        return { answer: { kind, status, retryAfter: new Date(at).toUTCString() }, notBefore: () => at };
      }
      const seconds = detail < 0.5 ? 0 : 1;
      return { answer: { kind, status, retryAfter: String(seconds) }, notBefore: (answeredAt) => answeredAt + seconds * 1000 };
    }
    case 'permanent':
      // Not 410: it disables the webhook at once, and the rest of its deliveries would end cancelled.
      return { answer: { kind, status: of([400, 404, 422]) } };
    case 'redirect':
      return { answer: { kind, status: of([301, 302]) } };
    case 'hang':
    case 'reset':
      return { answer: { kind } };
  }
}

/**
 * A real HTTPS receiver on 127.0.0.1 whose every answer is chosen by `decide`, and which keeps
 * its own log of what it did, per webhook-id in arrival order: the ground truth a test compares
 * the sender's records with. Redirects point at REDIRECT_PATH, which must never be requested.
 */
export class ChaosReceiver {
  static readonly REDIRECT_PATH = '/redirected-here';
  /** Every request, in arrival order. */
  readonly arrivals: ChaosArrival[] = [];
  readonly byMsgId = new Map<string, ChaosArrival[]>();
  /** Requests without a webhook-id, or to the redirect target. */
  readonly strays: { path: string; headers: IncomingHttpHeaders; at: number }[] = [];
  private readonly sockets = new Set<Socket>();
  /** Connections accepted, and handshakes the client broke off. */
  readonly tls = { connections: 0, abandonedHandshakes: 0 };

  private constructor(
    private readonly server: https.Server,
    private readonly decide: ChaosDecider,
  ) {}

  static async start(cert: TestCert, decide: ChaosDecider): Promise<ChaosReceiver> {
    // A long keep-alive: the sender must never pick a socket the receiver is closing as idle
    // (that request would fail without arriving, which this suite counts as a discrepancy).
    const server = https.createServer({ key: cert.key, cert: cert.cert, keepAlive: true, keepAliveTimeout: 120_000 });
    const rx = new ChaosReceiver(server, decide);
    server.on('connection', (s: Socket) => {
      rx.sockets.add(s);
      rx.tls.connections++;
      s.on('close', () => rx.sockets.delete(s));
    });
    // A client that gives up during the handshake (its connect timeout) shows here.
    server.on('tlsClientError', () => rx.tls.abandonedHandshakes++);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => rx.handle(req, res, Buffer.concat(chunks).toString('utf8')));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return rx;
  }

  private handle(req: IncomingMessage, res: ServerResponse, body: string): void {
    const at = Date.now();
    const path = req.url ?? '';
    const msgId = req.headers['webhook-id'];
    if (typeof msgId !== 'string' || path === ChaosReceiver.REDIRECT_PATH) {
      this.strays.push({ path, headers: req.headers, at });
      res.writeHead(200).end('stray');
      return;
    }
    const seen = this.byMsgId.get(msgId) ?? [];
    this.byMsgId.set(msgId, seen);
    const { kind, detail } = this.decide({ path, msgId, index: seen.length, body });
    const { answer, notBefore } = answerFor(kind, detail, at);
    const arrival: ChaosArrival = { msgId, path, headers: req.headers, body, index: seen.length, at, answer };
    seen.push(arrival);
    this.arrivals.push(arrival);

    if (kind === 'hang') {
      req.socket.once('close', () => (arrival.abandonedAt = Date.now()));
      return;
    }
    if (kind === 'reset') {
      arrival.answeredAt = Date.now();
      req.socket.destroy();
      return;
    }
    const send = () => {
      const headers: Record<string, string> = { 'content-type': 'text/plain' };
      if (answer.retryAfter !== undefined) headers['retry-after'] = answer.retryAfter;
      if (kind === 'redirect') headers.location = `https://127.0.0.1:${this.port}${ChaosReceiver.REDIRECT_PATH}`;
      arrival.answeredAt = Date.now();
      if (notBefore) arrival.notBefore = notBefore(arrival.answeredAt);
      res.writeHead(answer.status ?? 200, headers);
      res.end(answer.status === 204 ? undefined : `${kind} ${answer.status}`);
    };
    if (answer.delayMs) setTimeout(send, answer.delayMs);
    else send();
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(p: string): string {
    return `https://127.0.0.1:${this.port}${p}`;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(() => r(undefined)));
  }
}
