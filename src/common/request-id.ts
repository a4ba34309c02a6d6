import { randomUUID } from 'node:crypto';

/** The request id rides on the request object so the envelope, the filter and the logs agree. */
export interface WithRequestId {
  requestId?: string;
  headers: Record<string, string | string[] | undefined>;
}
/** A Node response (express, middleware) or a fastify reply. */
interface HeaderSink {
  setHeader?(name: string, value: string): unknown;
  header?(name: string, value: string): unknown;
  getHeader?(name: string): unknown;
  headersSent?: boolean;
  sent?: boolean;
}

// A caller-supplied id is echoed only when it is short and plain, so it cannot inject into logs.
const SAFE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * The middleware, the access log, `@RequestId()` and the error filter all ask for the id and give
 * the response: `X-Request-Id` is set once, the later askers finding it there (Node checks a
 * header's name and value on every set). Read back from the response rather than flagged on the
 * request: under express every property added to a request is a map transition of its own
 * (express swaps the request's prototype), ~1.3 µs each on a bare express app, more than
 * reading the header three times.
 */
export function ensureRequestId(req: WithRequestId, res?: HeaderSink): string {
  // Under fastify, middleware sees the Node request and handlers see its wrapper: keep the id on the Node one.
  const holder = (req as { raw?: WithRequestId }).raw ?? req;
  if (!holder.requestId) {
    const incoming = req.headers['x-request-id'];
    holder.requestId = typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : `req_${randomUUID().replace(/-/g, '')}`;
  }
  const id = holder.requestId;
  if (res && !res.headersSent && res.getHeader?.('x-request-id') !== id) {
    if (typeof res.setHeader === 'function') res.setHeader('X-Request-Id', id);
    else if (!res.sent) res.header?.('X-Request-Id', id);
  }
  return id;
}
