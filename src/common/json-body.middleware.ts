import { Injectable, NestMiddleware, Optional, Provider, RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { AppError } from './errors';
import { whenHttpAdapter } from './express-app-layer';

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

/** Set once the body was taken by trendhooks ahead of any parser (see ownJsonBodies): read, refused, or left for after authentication. */
const BODY_READ = Symbol('trendhooks:body-read');
/**
 * The body stream, not read yet: it is read by BodyErrorGuard once the principal guard has
 * checked the key (readPendingBody), so an unauthenticated client cannot make the server wait
 * for, or hold, up to 64 KiB per connection.
 */
const PENDING_BODY = Symbol('trendhooks:pending-body');
/** Under fastify: the request's own Content-Type while it travels under OWN_BODY_TYPE. */
const ORIGINAL_TYPE = Symbol('trendhooks:original-content-type');
/**
 * The media type a body of ours travels under inside fastify, from the preParsing hook to our
 * parser, so that no parser of the host's (JSON, forms, text) takes it.
 */
export const OWN_BODY_TYPE = 'application/x-trendhooks-own-body';

type Req = IncomingMessage & {
  body?: unknown;
  _body?: boolean;
  [BODY_ERROR]?: AppError;
  [WANTS_JSON_BODY]?: boolean;
  [BODY_READ]?: boolean;
  [ORIGINAL_TYPE]?: string;
  [PENDING_BODY]?: Readable;
};

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
 * Takes the JSON body (at most 64 KiB) of the routes of the module that applies it, to be read
 * after authentication by BodyErrorGuard (listed after the principal guard on the controllers that
 * read bodies): an unauthenticated request never has its body read. It never throws: middleware
 * errors bypass controller-scoped filters in a host app, so an error its headers show is parked
 * on the request and raised by that guard too.
 *
 * Under fastify the body reaches fastify's content-type parsing, after middleware: there this
 * middleware only marks the request, and the parser `ownJsonBodies` installs leaves the body for
 * the guard. Under express, `ownJsonBodies` has usually taken it already, ahead of any parser of the host's.
 */
@Injectable()
export class JsonBodyMiddleware implements NestMiddleware {
  constructor(@Optional() private readonly adapterHost?: HttpAdapterHost) {}

  use(req: Req, _res: unknown, next: (err?: unknown) => void): void {
    if (this.adapterHost?.httpAdapter?.getType() === 'fastify') {
      req[WANTS_JSON_BODY] = true;
      return next();
    }
    // Past the host's parsers (Nest registers them before any module's middleware): the request's own type again.
    restoreType(req);
    if (req[BODY_READ] || !hasBody(req)) return next();
    if (req._body || req.body !== undefined) {
      // A host app's own parser got here first: hold the parsed body to the same rules.
      const early = checkHeaders(req.headers) ?? (nestsDeeperThan(req.body, MAX_JSON_DEPTH) ? tooDeep() : undefined);
      if (early) req[BODY_ERROR] = early;
      return next();
    }
    deferBody(req, req);
    next();
  }
}

/**
 * Leaves the body of `req` unread until authentication (readPendingBody), or parks the error its
 * headers already show (not JSON, declared over 64 KiB). Either way the request counts as read
 * for the parsers after ours (`_body`: body-parser's own mark), which then leave it alone; an
 * unread body is discarded by Node once the response is sent.
 */
function deferBody(req: Req, stream: Readable): void {
  req[BODY_READ] = true;
  req._body = true;
  const early = checkHeaders(req.headers);
  if (early) req[BODY_ERROR] = early;
  else req[PENDING_BODY] = stream;
}

/**
 * Express: a body left unread (waiting, or refused by its headers) must also be left alone by the
 * host's parsers, which run before any module's middleware and, since body-parser 2, take a
 * request for read only once its stream has ended. Until JsonBodyMiddleware restores it, the
 * request travels under OWN_BODY_TYPE, which no parser of the host's takes (as under fastify).
 */
function hideTypeFromParsers(req: Req): void {
  req[ORIGINAL_TYPE] = req.headers['content-type'];
  req.headers['content-type'] = OWN_BODY_TYPE;
}

function restoreType(req: Req): void {
  if (!(ORIGINAL_TYPE in req) || req.headers['content-type'] !== OWN_BODY_TYPE) return;
  const original = req[ORIGINAL_TYPE];
  if (original === undefined) delete req.headers['content-type'];
  else req.headers['content-type'] = original;
  delete req[ORIGINAL_TYPE];
}

/**
 * Reads the body JsonBodyMiddleware left for after authentication (BodyErrorGuard calls it once
 * the principal guard let the request through) and puts it on the request (`req.body`, on the
 * fastify request and its raw one alike), or parks its error. Resolves at once when nothing waits.
 */
export function readPendingBody(req: unknown): Promise<void> {
  const raw = ((req as { raw?: Req }).raw ?? req) as Req;
  restoreType(raw);
  const stream = raw[PENDING_BODY];
  if (stream === undefined) return Promise.resolve();
  raw[PENDING_BODY] = undefined;
  return new Promise((resolve) => {
    readJsonBody(raw.headers, stream, (err, body) => {
      if (err) raw[BODY_ERROR] = err;
      else {
        raw.body = body;
        (req as { body?: unknown }).body = body;
      }
      resolve();
    });
  });
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
 * The standalone app's fastify parsers: none but this one, so bodies sent to routes that take none
 * are drained and ignored, as on express. Bodies of routes JsonBodyMiddleware marked reach it only
 * when `ownJsonBodies` is not installed (they travel under OWN_BODY_TYPE otherwise).
 */
export function installFastifyJsonBody(fastify: FastifyParsers): void {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (request, payload, done) => {
    if (!request.raw[WANTS_JSON_BODY]) {
      payload.resume();
      return done(null, undefined);
    }
    deferBody(request.raw, payload);
    done(null, undefined);
  });
}

export function takeBodyError(req: unknown): AppError | undefined {
  // Express hands Nest the Node request itself; fastify wraps it (`raw`).
  return (req as Req)[BODY_ERROR] ?? (req as { raw?: Req }).raw?.[BODY_ERROR];
}

interface RouteMatcher {
  method: string;
  path: RegExp;
}

/**
 * The routes of `controllers`, as method + a pattern of their path that allows any prefix before it
 * (a host's global prefix): `POST /v1/webhooks` matches `/v1/webhooks` and `/api/v1/webhooks`.
 */
export function routeMatchers(controllers: Type[]): RouteMatcher[] {
  const out: RouteMatcher[] = [];
  const clean = (p: unknown) => (Array.isArray(p) ? p[0] : (p ?? '')).toString().replace(/^\/+|\/+$/g, '');
  for (const c of controllers) {
    const base = clean(Reflect.getMetadata(PATH_METADATA, c));
    for (const name of Object.getOwnPropertyNames(c.prototype)) {
      const handler = (c.prototype as Record<string, unknown>)[name];
      if (name === 'constructor' || typeof handler !== 'function') continue;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (method === undefined) continue;
      const full = [base, clean(Reflect.getMetadata(PATH_METADATA, handler))].filter((x) => x !== '').join('/');
      const pattern = full
        .split('/')
        .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      out.push({ method: RequestMethod[method], path: new RegExp(`^(?:/.*)?/${pattern}/?$`, 'i') });
    }
  }
  return out;
}

function matches(matchers: RouteMatcher[], req: IncomingMessage): boolean {
  const path = (req.url ?? '/').split('?')[0];
  return matchers.some((m) => (m.method === 'ALL' || m.method === req.method) && m.path.test(path));
}

/**
 * Express: takes the bodies of our routes before any parser the host registered (Nest's body
 * parser included), to be read with our rules after authentication; the host's parsers find the
 * request marked read, under a media type none of them takes, and skip it (a parser that read it
 * would answer in its own words). Every other route keeps the host's parser and errors.
 */
function expressReader(matchers: RouteMatcher[]) {
  return function trendhooksJsonBody(req: Req, _res: unknown, next: () => void): void {
    if (req[BODY_READ] || !hasBody(req) || !matches(matchers, req)) return next();
    deferBody(req, req);
    hideTypeFromParsers(req);
    next();
  };
}

/** The part of a fastify instance the hook and parser need (no fastify types in the library's surface). */
interface FastifyHooks {
  addHook(
    name: 'preParsing',
    hook: (request: { raw: Req }, reply: unknown, payload: Readable, done: (err: Error | null, payload?: Readable) => void) => void,
  ): void;
  addContentTypeParser(
    type: string,
    parser: (request: { raw: Req }, payload: Readable, done: (err: Error | null, body?: unknown) => void) => void,
  ): void;
}

/**
 * Fastify parses after middleware, by Content-Type: a request JsonBodyMiddleware marked goes on
 * under OWN_BODY_TYPE, which only our parser takes; it gets its own Content-Type back and is left
 * for BodyErrorGuard to read with our rules, after authentication. Every other request meets the
 * host's parsers as before.
 */
function installFastifyReader(fastify: FastifyHooks): void {
  fastify.addHook('preParsing', (request, _reply, payload, done) => {
    const raw = request.raw;
    if (raw[WANTS_JSON_BODY] && hasBody(raw)) {
      raw[ORIGINAL_TYPE] = raw.headers['content-type'];
      raw.headers['content-type'] = OWN_BODY_TYPE;
    }
    done(null, payload);
  });
  fastify.addContentTypeParser(OWN_BODY_TYPE, (request, payload, done) => {
    const raw = request.raw;
    if (!raw[WANTS_JSON_BODY]) {
      // Sent with our private type to a route that is not ours: what fastify answers for a type it has no parser for.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { errorCodes } = require('fastify') as { errorCodes: Record<string, new () => Error> };
      return done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE());
    }
    const original = raw[ORIGINAL_TYPE];
    if (original === undefined) delete raw.headers['content-type'];
    else raw.headers['content-type'] = original;
    deferBody(raw, payload);
    done(null, undefined);
  });
}

const installed = new WeakMap<object, Set<Type>>();

/**
 * A provider that makes the module's routes read their own JSON bodies whether or not the host
 * app keeps Nest's body parser on (express and fastify): the same answers (`INVALID_JSON`,
 * `UNSUPPORTED_MEDIA_TYPE`, `PAYLOAD_TOO_LARGE` over 64 KiB, `VALIDATION_ERROR` past
 * MAX_JSON_DEPTH) in our envelope, after authentication, as with the parser off. It installs
 * itself on the HTTP adapter as soon as there is one (whenHttpAdapter: when Nest builds the module
 * under NestFactory.create, or when createNestApplication() makes the adapter of a compiled
 * testing module), before `init()` registers Nest's parsers. The host's own routes keep the host's parser and errors.
 * Use beside `consumer.apply(JsonBodyMiddleware).forRoutes(...controllers)`.
 */
export function ownJsonBodies(...controllers: Type[]): Provider {
  return {
    provide: `trendhooks:own-json-bodies:${controllers.map((c) => c.name).join(',')}`,
    inject: [{ token: HttpAdapterHost, optional: true }],
    useFactory: (host?: HttpAdapterHost) =>
      whenHttpAdapter(host, (adapter) => {
        const instance = adapter.getInstance() as object;
        let done = installed.get(instance);
        const fresh = controllers.filter((c) => !done?.has(c));
        if (fresh.length === 0) return;
        if (!done) {
          done = new Set();
          installed.set(instance, done);
          if (adapter.getType() === 'fastify') installFastifyReader(instance as FastifyHooks);
        }
        fresh.forEach((c) => done!.add(c));
        if (adapter.getType() === 'express') adapter.use(expressReader(routeMatchers(fresh)));
      }),
  };
}
