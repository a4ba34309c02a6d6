import { Injectable, NestMiddleware, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { AppError } from './errors';

export const MAX_BODY_BYTES = 64 * 1024;
/**
 * The deepest nesting a JSON body may have (the outer object is level 1). Every body the API takes
 * is one flat object; a bound keeps recursive code further on (class-transformer) from running out
 * of stack on `[[[[…]]]]`, which 64 KiB could otherwise nest 32,000 levels deep.
 */
export const MAX_JSON_DEPTH = 16;
/** Where a body error waits until the controller's interceptor can raise it inside our envelope. */
export const BODY_ERROR = Symbol('trendhooks:body-error');

/** Set by JsonBodyMiddleware under fastify: this route takes a JSON body. */
const WANTS_JSON_BODY = Symbol('trendhooks:wants-json-body');

type Req = IncomingMessage & { body?: unknown; _body?: boolean; [BODY_ERROR]?: AppError; [WANTS_JSON_BODY]?: boolean };

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

function hasBody(req: IncomingMessage): boolean {
  const len = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (len !== undefined && len !== '0');
}

type Headers = IncomingMessage['headers'];

/** The rules a body breaks by its headers alone: not JSON, or declared over 64 KiB. */
function checkHeaders(headers: Headers): AppError | undefined {
  const type = headers['content-type'];
  if (typeof type !== 'string' || !JSON_TYPE.test(type.trim())) return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
  if (Number(headers['content-length'] ?? 0) > MAX_BODY_BYTES) return new AppError('PAYLOAD_TOO_LARGE', 'request body is larger than 64 KiB');
  return undefined;
}

/**
 * Whether `value` nests objects/arrays deeper than `max` levels (a scalar is level 0, `{}` level 1).
 * Iterative, so it cannot itself overflow the stack whatever it is handed.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

export function tooDeep(): AppError {
  return new AppError('VALIDATION_ERROR', `request body nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays`);
}

/**
 * Reads a JSON body of at most 64 KiB from `stream` and hands over the value or the error to
 * answer with. Never throws; on an error the rest of the stream is drained.
 */
export function readJsonBody(headers: Headers, stream: Readable, done: (error: AppError | undefined, body?: unknown) => void): void {
  const early = checkHeaders(headers);
  if (early) {
    stream.resume();
    return done(early);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (err: AppError | undefined, body?: unknown) => {
    if (finished) return;
    finished = true;
    if (err) stream.resume();
    done(err, body);
  };
  stream.on('data', (chunk: Buffer) => {
    if (finished) return;
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return finish(new AppError('PAYLOAD_TOO_LARGE', 'request body is larger than 64 KiB'));
    chunks.push(chunk);
  });
  stream.on('error', () => finish(new AppError('BAD_REQUEST', 'request body could not be read')));
  stream.on('end', () => {
    if (finished) return;
    const text = Buffer.concat(chunks).toString('utf8');
    if (text.trim() === '') return finish(new AppError('INVALID_JSON', 'request body is empty; expected a JSON object'));
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return finish(new AppError('INVALID_JSON', 'request body is not valid JSON'));
    }
    if (nestsDeeperThan(body, MAX_JSON_DEPTH)) return finish(tooDeep());
    finish(undefined, body);
  });
}

/**
 * Reads a JSON body of at most 64 KiB for the routes of the module that applies it. It never
 * throws: middleware errors bypass controller-scoped filters in a host app, so the error is parked
 * on the request and raised by the EnvelopeInterceptor after authentication.
 *
 * Under fastify the body is read by fastify's content-type parsing, after middleware: there this
 * middleware only marks the request, and the parser of `installFastifyJsonBody` reads it.
 */
@Injectable()
export class JsonBodyMiddleware implements NestMiddleware {
  constructor(@Optional() private readonly adapterHost?: HttpAdapterHost) {}

  use(req: Req, _res: unknown, next: (err?: unknown) => void): void {
    if (this.adapterHost?.httpAdapter?.getType() === 'fastify') {
      req[WANTS_JSON_BODY] = true;
      return next();
    }
    if (!hasBody(req)) return next();
    if (req._body || req.body !== undefined) {
      // A host app's own parser got here first: hold the parsed body to the same rules.
      const early = checkHeaders(req.headers) ?? (nestsDeeperThan(req.body, MAX_JSON_DEPTH) ? tooDeep() : undefined);
      if (early) req[BODY_ERROR] = early;
      return next();
    }
    readJsonBody(req.headers, req, (err, body) => {
      if (err) req[BODY_ERROR] = err;
      else {
        req.body = body;
        req._body = true;
      }
      next();
    });
  }
}

/** The part of a fastify instance the parser needs (no fastify types in the library's surface). */
interface FastifyParsers {
  removeAllContentTypeParsers(): void;
  addContentTypeParser(
    type: string,
    parser: (request: { raw: Req; headers: Headers }, payload: Readable, done: (err: Error | null, body?: unknown) => void) => void,
  ): void;
}

/**
 * Replaces fastify's body parsers with the equivalent of JsonBodyMiddleware: routes it marked get
 * their JSON body or a parked error (same codes, same order after authentication); bodies sent to
 * any other route are drained and ignored, as on express.
 */
export function installFastifyJsonBody(fastify: FastifyParsers): void {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (request, payload, done) => {
    if (!request.raw[WANTS_JSON_BODY]) {
      payload.resume();
      return done(null, undefined);
    }
    readJsonBody(request.headers, payload, (err, body) => {
      if (err) request.raw[BODY_ERROR] = err;
      done(null, body);
    });
  });
}

export function takeBodyError(req: unknown): AppError | undefined {
  // Express hands Nest the Node request itself; fastify wraps it (`raw`).
  return (req as Req)[BODY_ERROR] ?? (req as { raw?: Req }).raw?.[BODY_ERROR];
}
