import { randomUUID } from 'node:crypto';

/** The request id rides on the request object so the envelope, the filter and the logs agree. */
export interface WithRequestId {
  requestId?: string;
  headers: Record<string, string | string[] | undefined>;
}
interface HeaderSink {
  setHeader(name: string, value: string): unknown;
  headersSent?: boolean;
}

// A caller-supplied id is echoed only when it is short and plain, so it cannot inject into logs.
const SAFE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export function ensureRequestId(req: WithRequestId, res?: HeaderSink): string {
  if (!req.requestId) {
    const incoming = req.headers['x-request-id'];
    req.requestId = typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : `req_${randomUUID().replace(/-/g, '')}`;
  }
  if (res && !res.headersSent) res.setHeader('X-Request-Id', req.requestId);
  return req.requestId;
}
