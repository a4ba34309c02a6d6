import type { Server } from 'node:http';
import * as net from 'node:net';

/** Listens on an ephemeral loopback port if the server is not listening yet; returns the port. */
export async function listening(server: Server): Promise<number> {
  if (!server.listening) await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as net.AddressInfo).port;
}

export interface RawAnswer {
  status: number;
  /** Lower-cased names; a repeated header keeps its last value. */
  headers: Record<string, string>;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: any;
}

/**
 * Sends `bytes` as they are over one connection to 127.0.0.1:`port` (what no HTTP client would
 * send: NULs, repeated headers, broken chunking) and reads the first response. Resolves once that
 * response is complete or the server closes; rejects after `timeoutMs` without an answer.
 */
export function rawRequest(port: number, bytes: string | Buffer, timeoutMs = 5000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    let settled = false;
    const timer = setTimeout(() => done(new Error(`no complete answer within ${timeoutMs} ms: ${JSON.stringify(data.toString('latin1').slice(0, 200))}`)), timeoutMs);
    const done = (err?: Error) => {
      if (settled) return;
      const parsed = parse(data);
      if (!err && !parsed) err = new Error(`connection closed without a complete answer: ${JSON.stringify(data.toString('latin1').slice(0, 200))}`);
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(parsed!);
    };
    socket.on('data', (chunk) => {
      data = Buffer.concat([data, chunk]);
      if (parse(data)) done();
    });
    socket.on('error', (err) => (parse(data) ? done() : done(err)));
    socket.on('close', () => done());
    socket.write(bytes);
  });
}

function parse(data: Buffer): RawAnswer | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!m) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const rest = data.subarray(end + 4);
  let bodyBytes: Buffer;
  if (headers['content-length'] !== undefined) {
    const len = Number(headers['content-length']);
    if (rest.length < len) return undefined;
    bodyBytes = rest.subarray(0, len);
  } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const chunks: Buffer[] = [];
    let at = 0;
    for (;;) {
      const eol = rest.indexOf('\r\n', at);
      if (eol < 0) return undefined;
      const size = parseInt(rest.subarray(at, eol).toString('latin1'), 16);
      if (size === 0) break;
      if (rest.length < eol + 2 + size) return undefined;
      chunks.push(rest.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    bodyBytes = Buffer.concat(chunks);
  } else {
    bodyBytes = rest;
  }
  const text = bodyBytes.toString('utf8');
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: Number(m[1]), headers, text, body };
}

/** A raw connection a test drives by hand (a slow client): what it received, and when it was closed. */
export interface RawConnection {
  socket: net.Socket;
  /** Everything received so far. */
  received(): string;
  /** Resolves, with the ms from connect to close, once the server closes the connection. */
  closed: Promise<number>;
}

/** Opens a connection to 127.0.0.1:`port` and resolves once it is established. */
export function rawConnect(port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    const t0 = Date.now();
    const closed = new Promise<number>((done) => socket.once('close', () => done(Date.now() - t0)));
    socket.on('data', (chunk) => (data = Buffer.concat([data, chunk])));
    // The server may reset the connection; `closed` still resolves.
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, received: () => data.toString('latin1'), closed }));
    socket.once('error', reject);
  });
}

/** Writes `text` one byte every `everyMs` until it is written or the connection is closed. */
export async function trickle(conn: RawConnection, text: string, everyMs: number): Promise<void> {
  for (const ch of text) {
    if (conn.socket.destroyed || !conn.socket.writable) return;
    conn.socket.write(ch);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
