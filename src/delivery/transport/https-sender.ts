import { EventEmitter } from 'node:events';
import { request } from 'undici';
import { createPinnedDispatcher, PinnedDispatcher } from '../../ssrf/pinned-dispatcher';
import type { CheckedDestination } from '../../ssrf/ssrf-policy';

export const RESPONSE_EXCERPT_BYTES = 1024;
// Beyond the excerpt, a receiver's body is drained up to this much to keep the connection reusable.
const DRAIN_LIMIT_BYTES = 64 * 1024;

export interface PostResult {
  statusCode: number;
  excerpt: string;
  retryAfter: string | string[] | undefined;
}

export interface HttpsSenderOptions {
  /** Extra trusted CA (PEM). */
  ca?: string | Buffer;
  /** TCP+TLS connect timeout. */
  connectTimeoutMs: number;
  /** Parallel sends at most (the worker's concurrency): the bound of sockets per destination. */
  connections: number;
}

/**
 * Outbound HTTP for deliveries: undici with pooled keep-alive connections, each pinned to the
 * addresses the SSRF policy checked in the same attempt. Redirects are never followed.
 */
export class HttpsSender {
  private readonly pinned: PinnedDispatcher;

  constructor(opts: HttpsSenderOptions) {
    // At most one socket per parallel send to a destination: unbounded, undici opened a second
    // TLS connection whenever a send began in the instant before the previous one's socket was
    // free again (twice the handshakes for nothing, and more sockets held open at the receiver).
    this.pinned = createPinnedDispatcher({ ca: opts.ca, connectTimeoutMs: opts.connectTimeoutMs, connections: opts.connections });
  }

  async post(dest: CheckedDestination, headers: Record<string, string>, body: string, timeoutMs: number): Promise<PostResult> {
    // The total-time limit. Not AbortSignal.timeout(): its timer outlives the request and, firing
    // 10 s later, builds a DOMException for every delivery already done. And an EventEmitter as the
    // signal (undici takes one; it reads `reason` on 'abort'): an AbortSignal is an EventTarget,
    // several times dearer to create and to listen on, and this runs for every delivery.
    const signal = new EventEmitter() as EventEmitter & { reason?: Error };
    const timer = setTimeout(() => {
      signal.reason = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
      signal.emit('abort');
    }, timeoutMs);
    try {
      const res = await request(dest.url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.pinned.dispatcherFor(dest),
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      // Keep the first KiB; read on (so the connection can be reused) up to the drain limit, then
      // leaving the loop destroys the body and its socket.
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of res.body) {
          if (size < RESPONSE_EXCERPT_BYTES) chunks.push(chunk as Buffer);
          size += (chunk as Buffer).length;
          if (size > DRAIN_LIMIT_BYTES) break;
        }
      } catch {
        // A body cut short still leaves a status: the attempt is judged on it.
      }
      return {
        statusCode: res.statusCode,
        excerpt: truncateUtf8(Buffer.concat(chunks), RESPONSE_EXCERPT_BYTES),
        retryAfter: res.headers['retry-after'],
      };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits for the requests in flight. */
  close(): Promise<void> {
    return this.pinned.close();
  }
}

/** At most `max` bytes, cut on a character boundary. */
export function truncateUtf8(buf: Buffer, max: number): string {
  if (buf.length <= max) return buf.toString('utf8');
  let end = max;
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}
