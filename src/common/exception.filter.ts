import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Inject, Logger, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppError, ErrorCode, ERROR_STATUS } from './errors';
import { ensureRequestId } from './request-id';

interface ErrorBody {
  error: { code: ErrorCode; message: string; request_id: string };
}

const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  503: 'SERVICE_UNAVAILABLE',
};

/**
 * Says whether an unexpected error means the database is unreachable or locked for now (503, retry)
 * rather than a failed statement. The database layer knows its drivers' errors and provides it
 * (DatabaseUnavailableModule); this floor of the code base only asks.
 */
export type DatabaseUnavailableClassifier = (err: unknown) => boolean;

/** Injection token of the classifier ApiExceptionFilter asks; without a provider nothing is classified (500). */
export const DATABASE_UNAVAILABLE = Symbol('trendhooks:database-unavailable');

const classifiesNothing: DatabaseUnavailableClassifier = () => false;

/** Maps any thrown value to the spec 2.4 envelope. Only AppError messages reach the client verbatim. */
export function toErrorResponse(exception: unknown, method?: string, url?: string, isDatabaseUnavailable = classifiesNothing): AppError {
  if (exception instanceof AppError) return exception;
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    if (status === 404) return new AppError('NOT_FOUND', `no route ${method ?? ''} ${stripQuery(url)}`.replace(/\s+/g, ' ').trim());
    const code = STATUS_CODES[status];
    if (code) return new AppError(code, safeHttpMessage(exception));
    if (status >= 400 && status < 500) return new AppError('BAD_REQUEST', safeHttpMessage(exception));
    return new AppError('INTERNAL_ERROR', 'internal error');
  }
  // fastify's own client errors (FST_*: a malformed Content-Type or URL, …) carry their status.
  const fst = exception as { code?: unknown; statusCode?: unknown; message?: unknown } | null;
  if (typeof fst?.code === 'string' && fst.code.startsWith('FST_') && typeof fst.statusCode === 'number' && fst.statusCode >= 400 && fst.statusCode < 500) {
    if (fst.statusCode === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
    if (fst.statusCode === 413) return new AppError('PAYLOAD_TOO_LARGE', 'request body is larger than 64 KiB');
    if (fst.statusCode === 404) return new AppError('NOT_FOUND', `no route ${method ?? ''} ${stripQuery(url)}`.replace(/\s+/g, ' ').trim());
    return new AppError(STATUS_CODES[fst.statusCode] ?? 'BAD_REQUEST', String(fst.message).slice(0, 200));
  }
  // body-parser style errors (from a host app's parser, or express itself).
  const type = (exception as { type?: unknown } | null)?.type;
  if (type === 'entity.parse.failed') return new AppError('INVALID_JSON', 'request body is not valid JSON');
  if (type === 'entity.too.large') return new AppError('PAYLOAD_TOO_LARGE', 'request body is larger than 64 KiB');
  if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
    return new AppError('UNSUPPORTED_MEDIA_TYPE', 'request body must be UTF-8 JSON');
  }
  if (isDatabaseUnavailable(exception)) return databaseUnavailable();
  return new AppError('INTERNAL_ERROR', 'internal error');
}

/** The answer while the database cannot be reached or is locked: the client should simply try again. */
export function databaseUnavailable(): AppError {
  return new AppError('SERVICE_UNAVAILABLE', 'the database is temporarily unavailable; retry the request', { 'Retry-After': '1' });
}

function stripQuery(url?: string): string {
  const path = (url ?? '').split('?')[0];
  return path.length > 200 ? path.slice(0, 200) + '…' : path;
}

function safeHttpMessage(e: HttpException): string {
  const r = e.getResponse();
  const msg = typeof r === 'string' ? r : (r as { message?: unknown }).message;
  const text = Array.isArray(msg) ? msg.join('; ') : typeof msg === 'string' ? msg : e.message;
  return text.slice(0, 500);
}

function describeCause(e: unknown): Record<string, unknown> | string {
  if (!(e instanceof Error)) return String(e);
  const code = (e as { code?: unknown }).code ?? (e as { driverError?: { code?: unknown } }).driverError?.code;
  return { name: e.name, message: e.message, ...(typeof code === 'string' ? { code } : {}) };
}

/**
 * Called before a request that matched no route is answered `404 NOT_FOUND`: it may set headers on
 * the answer, and may give another error to answer instead. The standalone app charges unmatched
 * `/v1` requests to the caller's rate limit with it (a 429 past the limit). Not provided: not called.
 */
export type UnmatchedRouteHook = (host: ArgumentsHost) => Promise<AppError | undefined>;

/** Injection token of the UnmatchedRouteHook ApiExceptionFilter calls. */
export const UNMATCHED_ROUTE_HOOK = Symbol('trendhooks:unmatched-route-hook');

@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('trendhooks');

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Optional() @Inject(DATABASE_UNAVAILABLE) private readonly isDatabaseUnavailable: DatabaseUnavailableClassifier = classifiesNothing,
    @Optional() @Inject(UNMATCHED_ROUTE_HOOK) private readonly unmatchedRoute?: UnmatchedRouteHook,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void | Promise<void> {
    const req = host.switchToHttp().getRequest();
    const requestId = ensureRequestId(req, host.switchToHttp().getResponse());
    const err = this.toError(exception, req, requestId);
    // A 404 that is not an AppError is the router's: no route matched.
    if (this.unmatchedRoute && err.code === 'NOT_FOUND' && !(exception instanceof AppError)) {
      return this.unmatchedRoute(host).then(
        (instead) => this.reply(host, instead ?? err, requestId),
        (failure: unknown) => this.reply(host, this.toError(failure, req, requestId), requestId),
      );
    }
    this.reply(host, err, requestId);
  }

  /** The error to answer for `exception`, logged when it is unexpected. */
  private toError(exception: unknown, req: { method?: string; originalUrl?: string; url?: string }, requestId: string): AppError {
    const err = toErrorResponse(exception, req.method, req.originalUrl ?? req.url, this.isDatabaseUnavailable);
    if (err.code === 'SERVICE_UNAVAILABLE' && !(exception instanceof AppError) && !(exception instanceof HttpException)) {
      // Expected during a database outage (one line per request, no stack); readiness reports it too.
      this.logger.warn({ request_id: requestId, err: describeCause(exception) }, 'database unavailable');
    } else if (err.code === 'INTERNAL_ERROR') {
      this.logger.error(
        { request_id: requestId, err: exception instanceof Error ? { name: exception.name, message: exception.message, stack: exception.stack } : String(exception) },
        'unhandled error',
      );
    }
    return err;
  }

  private reply(host: ArgumentsHost, err: AppError, requestId: string): void {
    const res = host.switchToHttp().getResponse();
    const adapter = this.adapterHost.httpAdapter;
    if (res.headersSent || res.sent) return; // (`sent`: a fastify reply)
    for (const [name, value] of Object.entries(err.headers)) adapter.setHeader(res, name, value);
    const body: ErrorBody = { error: { code: err.code, message: err.message, request_id: requestId } };
    adapter.reply(res, body, ERROR_STATUS[err.code]);
  }
}
