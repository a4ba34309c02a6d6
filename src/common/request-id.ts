import { randomUUID } from 'node:crypto';

/** The request id rides on the request object so the envelope, the filter and the logs agree. */
export interface WithRequestId {
  requestId?: string;
  headers: Record<string, string | string[] | undefined>;
  [ECHOED]?: boolean;
}
/** A Node response (express, middleware) or a fastify reply. */
interface HeaderSink {
  setHeader?(name: string, value: string): unknown;
  header?(name: string, value: string): unknown;
  headersSent?: boolean;
  sent?: boolean;
}

// A caller-supplied id is echoed only when it is short and plain, so it cannot inject into logs.
const SAFE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * Set once `X-Request-Id` is on the response: the middleware, the access log, `@RequestId()` and
 * the error filter all ask for the id, and Node checks a header's name and value on every set.
 */
const ECHOED = Symbol('trendhooks:request-id-echoed');

export function ensureRequestId(req: WithRequestId, res?: HeaderSink): string {
  // Under fastify, middleware sees the Node request and handlers see its wrapper: keep the id on the Node one.
  const holder = (req as { raw?: WithRequestId }).raw ?? req;
  if (!holder.requestId) {
    const incoming = req.headers['x-request-id'];
    holder.requestId = typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : `req_${randomUUID().replace(/-/g, '')}`;
  }
  if (res && !holder[ECHOED] && !res.headersSent && !res.sent) {
    if (typeof res.setHeader === 'function') res.setHeader('X-Request-Id', holder.requestId);
    else res.header?.('X-Request-Id', holder.requestId);
    holder[ECHOED] = true;
  }
  return holder.requestId;
}
