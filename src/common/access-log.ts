import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonLineLogger as Logger } from './log-types';
import { ensureRequestId, WithRequestId } from './request-id';

// A client may wrongly put its key (or a webhook secret) in a query string; the URL is logged.
const CREDENTIAL_IN_URL = /(th_live_|whsec_)[^&#\s]*/g;

export type LoggedRequest = IncomingMessage & WithRequestId & { id?: string; log?: Logger; originalUrl?: string; readableAborted?: boolean };
type LoggedResponse = ServerResponse & { err?: unknown };

/** Header values never written (the API key rides in Authorization): the logger's redaction covers these paths. */
export const REDACTED_REQUEST_HEADERS = ['authorization', 'cookie', 'proxy-authorization', 'x-api-key'] as const;
export const REDACTED_RESPONSE_HEADERS = ['set-cookie'] as const;
const CENSOR = '[redacted]';
/**
 * Request headers that carry a credential by their name, beyond the standard ones above: the
 * conventions of other APIs and proxies a client may send (`Api-Key`, `X-Auth-Token`,
 * `X-Access-Token`, `X-Session-Id`, `X-CSRF-Token`, `X-Amz-Security-Token`, any `…-key`).
 */
const CREDENTIAL_HEADER = /auth|token|secret|passw|cookie|session|credential|signature|csrf|xsrf|api-?key|(?:^|[-_.])key$/i;
/** Values that are credentials whatever the header's name: a scheme and its token, or one of our keys or secrets. */
const CREDENTIAL_VALUE = /^\s*(?:bearer|basic|digest|token|negotiate)\s|th_live_|whsec_/i;

const holdsCredential = (value: unknown): boolean =>
  typeof value === 'string' ? CREDENTIAL_VALUE.test(value) : Array.isArray(value) && value.some((v) => typeof v === 'string' && CREDENTIAL_VALUE.test(v));

/**
 * A copy of the request's headers with every credential censored: the standard credential headers
 * (REDACTED_REQUEST_HEADERS), any header named like one, and any value that is one. The headers
 * themselves when there is none (most requests: no copy).
 */
export function censorRequestHeaders(headers: object): object {
  let out: Record<string, unknown> | undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || !(CREDENTIAL_HEADER.test(name) || holdsCredential(value))) continue;
    out ??= { ...headers };
    out[name] = CENSOR;
  }
  return out ?? headers;
}

export interface AccessLogOptions {
  /** Requests whose access line is left out (probes, scrapes); their other logs still carry the id. */
  ignore?: (req: IncomingMessage) => boolean;
  /**
   * Writes the access lines instead of `logger`: the same logger without pino's redaction, the
   * credential headers (REDACTED_*_HEADERS) being censored here instead — the same line, without
   * the redaction's copy-and-restore of the whole line per request (about half of the line's cost).
   */
  lineLogger?: Logger;
  /**
   * Runs the rest of the request (`next`) in the request's logging context (the standalone app:
   * JsonLogger's store holding `req.log`), from this same middleware rather than one more layer.
   */
  runInContext?: (req: LoggedRequest, next: () => void) => void;
}

/**
 * The one access line per request, written straight through the base logger when the response ends:
 * `request completed` (info), `request aborted` (info), or `request errored` (error, for a 5xx or a
 * failed response) with `request_id`, `req` (id, method, URL with credentials redacted, headers,
 * address), `res` (status, headers), `err` when failed, and `responseTime` in ms — the very line
 * pino-http wrote, without its two child loggers per request (a pino child costs more than the
 * line itself).
 *
 * `req.log` is the logger that logs written while serving the request go to (the standalone app binds it
 * through JsonLogger): a child carrying `request_id`, made only when something is logged.
 */
export function accessLogMiddleware(logger: Logger, options: AccessLogOptions = {}) {
  const ignore = options.ignore;
  const runInContext = options.runInContext;
  const lines: LineWriter = options.lineLogger ? { logger: options.lineLogger, censor: true } : { logger, censor: false };
  return function accessLog(req: LoggedRequest, res: LoggedResponse, next: () => void): void {
    const id = ensureRequestId(req, res);
    req.id = id;
    // Through the declared field: pino-http's typings (its spec compares lines with it) widen
    // IncomingMessage's `log` to pino's full Logger, which this narrower logger need not be.
    (req as { log?: Logger }).log = lazyChild(logger, id);
    const start = Date.now();
    const done = (err?: unknown) => {
      res.removeListener('close', done);
      res.removeListener('finish', done);
      res.removeListener('error', done);
      writeLine(lines, req, res, start, err);
    };
    // An ignored route's line is still written when its response fails.
    if (!ignore?.(req)) {
      res.on('close', done);
      res.on('finish', done);
    }
    res.on('error', done);
    if (runInContext) runInContext(req, next);
    else next();
  };
}

interface LineWriter {
  logger: Logger;
  /** Whether the credential headers are censored here (the logger does not redact). */
  censor: boolean;
}

/** A copy of `headers` with the values of `names` censored, keys in their order, absent ones left absent (as pino's redaction does). */
function censored(headers: object, names: readonly string[]): object {
  let out: Record<string, unknown> | undefined;
  for (const name of names) {
    if ((headers as Record<string, unknown>)[name] === undefined) continue;
    out ??= { ...headers };
    out[name] = CENSOR;
  }
  return out ?? headers;
}

function writeLine({ logger, censor }: LineWriter, req: LoggedRequest, res: LoggedResponse, start: number, err: unknown): void {
  const failure = err || res.err;
  const failed = Boolean(failure) || res.statusCode >= 500;
  const line: Record<string, unknown> = {
    request_id: req.id,
    req: {
      id: req.id,
      method: req.method,
      url: String(req.originalUrl || req.url).replace(CREDENTIAL_IN_URL, '$1[redacted]'),
      // Always censored here: pino's redaction (censor false) knows fixed paths only, not every credential header.
      headers: censorRequestHeaders(req.headers),
      remoteAddress: req.socket?.remoteAddress,
    },
    res: { statusCode: res.headersSent ? res.statusCode : null, headers: censor ? censored(res.getHeaders(), REDACTED_RESPONSE_HEADERS) : res.getHeaders() },
  };
  // The level follows the response (an error for a 5xx or a failed response), as pino-http's customLogLevel did.
  const level = err || res.statusCode >= 500 ? 'error' : 'info';
  if (failed) {
    line.err = failure || new Error(`failed with status code ${res.statusCode}`);
    line.responseTime = Date.now() - start;
    logger[level](line, 'request errored');
    return;
  }
  line.responseTime = Date.now() - start;
  logger[level](line, !req.readableAborted && res.writableEnded ? 'request completed' : 'request aborted');
}

/** A logger that becomes `logger.child({ request_id })` on first use: most requests never log. */
function lazyChild(logger: Logger, requestId: string): Logger {
  let child: Logger | undefined;
  const real = () => (child ??= logger.child({ request_id: requestId }));
  return new Proxy(logger, {
    get(_target, key) {
      const target = real();
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
    set(_target, key, value) {
      return Reflect.set(real(), key, value);
    },
  });
}
