import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { errorChain } from './error-chain';
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

/** Maps any thrown value to the spec 2.4 envelope. Only AppError messages reach the client verbatim. */
export function toErrorResponse(exception: unknown, method?: string, url?: string): AppError {
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

// Socket-level failures of a database connection (refused while the server is down, cut by a crash).
const CONNECTION_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
// PostgreSQL SQLSTATEs: class 08 (connection exception), 57P01 admin_shutdown, 57P02 crash_shutdown,
// 57P03 cannot_connect_now (starting up, in recovery, shutting down), 53300 too_many_connections.
const PG_UNAVAILABLE_STATE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;
// node-postgres reports a lost or never-made connection by message only (no code).
const PG_CONNECTION_MESSAGE = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)/;

/**
 * Whether `err` (or what it wraps: `cause`, AggregateError `errors`, TypeORM's `driverError`) says
 * the database is unreachable or momentarily unable to take the statement, rather than that the
 * statement was wrong: a lost or refused PostgreSQL connection, a server shutting down, restarting
 * or in recovery, a pool that could not hand out a connection in time; a SQLite database locked
 * by another writer past the busy timeout. Such a request may simply be retried.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (const { code, message } of errorChain(err)) {
    if (typeof code === 'string') {
      if (CONNECTION_ERRNOS.has(code) || PG_UNAVAILABLE_STATE.test(code)) return true;
      if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return true;
    }
    if (typeof message === 'string' && PG_CONNECTION_MESSAGE.test(message)) return true;
  }
  return false;
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

@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('trendhooks');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest();
    const res = http.getResponse();
    const requestId = ensureRequestId(req, res);
    const err = toErrorResponse(exception, req.method, req.originalUrl ?? req.url);
    if (err.code === 'SERVICE_UNAVAILABLE' && !(exception instanceof AppError) && !(exception instanceof HttpException)) {
      // Expected during a database outage (one line per request, no stack); readiness reports it too.
      this.logger.warn({ request_id: requestId, err: describeCause(exception) }, 'database unavailable');
    } else if (err.code === 'INTERNAL_ERROR') {
      this.logger.error(
        { request_id: requestId, err: exception instanceof Error ? { name: exception.name, message: exception.message, stack: exception.stack } : String(exception) },
        'unhandled error',
      );
    }
    const adapter = this.adapterHost.httpAdapter;
    if (res.headersSent || res.sent) return; // (`sent`: a fastify reply)
    for (const [name, value] of Object.entries(err.headers)) adapter.setHeader(res, name, value);
    const body: ErrorBody = { error: { code: err.code, message: err.message, request_id: requestId } };
    adapter.reply(res, body, ERROR_STATUS[err.code]);
  }
}
