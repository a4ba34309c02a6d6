import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import * as path from 'node:path';

/**
 * A self-signed certificate for 127.0.0.1 and localhost in `dir`; `caFile` is what the sender is
 * told to trust (DELIVERY_CA_FILE). A leaf, not a CA: trusted as a root, a CA's key could sign a
 * certificate for any host the sender delivers to.
 */
export interface DemoCert {
  key: string;
  cert: string;
  caFile: string;
}

/**
 * Made with the openssl binary: Node has no API to issue an X.509 certificate. `days` and `name`
 * let `trendhooks listen` keep a longer-lived certificate of its own (the demo's lives a day).
 * `req -x509` makes a CA by default (the config's v3_ca: `CA:TRUE`); the extensions below make it
 * an end-entity certificate for TLS servers, good for 127.0.0.1 and localhost only, whose key
 * cannot issue certificates anyone trusting it would accept.
 */
export async function makeSelfSignedCert(dir: string, opts: { days?: number; name?: string } = {}): Promise<DemoCert> {
  const keyFile = path.join(dir, 'receiver-key.pem');
  const certFile = path.join(dir, 'receiver-cert.pem');
  const args = [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', keyFile, '-out', certFile, '-days', String(opts.days ?? 1), '-subj', `/CN=${opts.name ?? 'trendhooks-demo-receiver'}`,
    '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-addext', 'basicConstraints=critical,CA:FALSE',
    '-addext', 'keyUsage=critical,digitalSignature',
    '-addext', 'extendedKeyUsage=serverAuth',
  ];
  await new Promise<void>((resolve, reject) => {
    execFile('openssl', args, { timeout: 30_000 }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        return reject(new Error('openssl was not found on PATH: trendhooks needs it to make a self-signed certificate for its local HTTPS receiver (install it, e.g. apt-get install openssl or brew install openssl)'));
      }
      const why = String(stderr).trim().split('\n')[0] || err.message;
      reject(new Error(`openssl could not make the receiver's certificate: ${why}`));
    });
  });
  return { key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8'), caFile: certFile };
}

/** Whether `certPem` may issue certificates (a CA): such a certificate must not be the receiver's. */
export function isCaCertificate(certPem: string): boolean {
  return new X509Certificate(certPem).ca;
}

/** The largest request body the receiver reads; larger ones are answered 413 unread. */
export const RECEIVER_MAX_BODY_BYTES = 1024 * 1024;

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes received, as text: signatures are over these, never over re-serialised JSON. */
  body: string;
  receivedAt: number;
}

/** The demo's webhook endpoint: HTTPS on 127.0.0.1, an ephemeral port; `handle` decides the status. */
export class DemoReceiver {
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: https.Server) {}

  /**
   * `port` 0 picks a free one; `handle` may answer later (listen forwards first). A body over
   * `maxBodyBytes` is answered 413 and the connection closed, without buffering it; `onTooLarge`
   * is told.
   */
  static async start(
    cert: DemoCert,
    handle: (req: ReceivedRequest) => number | Promise<number>,
    port = 0,
    opts: { maxBodyBytes?: number; onTooLarge?: (req: { path: string; headers: IncomingHttpHeaders }) => void } = {},
  ): Promise<DemoReceiver> {
    const max = opts.maxBodyBytes ?? RECEIVER_MAX_BODY_BYTES;
    const server = https.createServer({ key: cert.key, cert: cert.cert });
    const rx = new DemoReceiver(server);
    server.on('connection', (s: Socket) => {
      rx.sockets.add(s);
      s.on('close', () => rx.sockets.delete(s));
    });
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let refused = false;
      const refuse = () => {
        refused = true;
        chunks.length = 0;
        opts.onTooLarge?.({ path: req.url ?? '', headers: req.headers });
        res.writeHead(413, { 'content-type': 'text/plain', connection: 'close' });
        res.end('payload too large');
        // Nothing more is read: the rest of the body goes with the connection.
        res.once('finish', () => req.socket.destroy());
      };
      if (Number(req.headers['content-length'] ?? 0) > max) return refuse();
      req.on('data', (c: Buffer) => {
        if (refused) return;
        size += c.length;
        if (size > max) refuse();
        else chunks.push(c);
      });
      req.on('end', () => {
        if (refused) return;
        const answer = (status: number) => {
          res.writeHead(status, { 'content-type': 'text/plain' });
          res.end(status < 300 ? 'ok' : 'rejected');
        };
        Promise.resolve()
          .then(() => handle({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now() }))
          .then(answer, () => answer(500));
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    return rx;
  }

  url(p: string): string {
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}${p}`;
  }

  async close(): Promise<void> {
    // Keep-alive sockets from the sender would hold close() open.
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
