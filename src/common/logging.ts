import { DynamicModule, Inject, Injectable, LoggerService, MiddlewareConsumer, Module, NestModule, OnModuleInit, Type } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage } from 'node:http';
import pino from 'pino';
import type { JsonLineLogger as Logger, LogStream } from './log-types';
import { expressAppLayer, ExpressAppLayerState } from './express-app-layer';
import { accessLogMiddleware, LoggedRequest as AccessLoggedRequest, REDACTED_REQUEST_HEADERS, REDACTED_RESPONSE_HEADERS } from './access-log';
import { isoString } from './iso-time';
import { JsonLogger, runWithRequestLogger } from './json-logger';
import { ensureRequestId, WithRequestId } from './request-id';

/** The JSON log thresholds (LOG_LEVEL); `silent` writes nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/** Header values that must never be written: credentials (the API key rides in Authorization) and cookies. */
export const REDACTED_PATHS = [
  ...REDACTED_REQUEST_HEADERS.map((h) => `req.headers[${JSON.stringify(h)}]`),
  ...REDACTED_RESPONSE_HEADERS.map((h) => `res.headers[${JSON.stringify(h)}]`),
];

// Probes and scrapes every few seconds would drown the request log; their failures are still logged.
const QUIET_PATHS = /^\/(healthz|readyz|metrics)(?:[?#]|$)/;
/**
 * By the URL the client sent: a middleware mounted on a path (Nest's `*path` under fastify's
 * middie, or express's `use(path)`) sees `req.url` with the matched part cut off (`/`), which let
 * every probe through to the log.
 */
const isQuietPath = (req: IncomingMessage & { originalUrl?: string }): boolean => QUIET_PATHS.test(req.originalUrl ?? req.url ?? '');

export interface StructuredLogOptions {
  level: LogLevelName;
  /** Where the JSON lines go; stdout (synchronous, so nothing is lost at exit) by default. */
  stream?: LogStream;
}

type LoggedRequest = IncomingMessage & WithRequestId;

/** pino's stdTimeFunctions.isoTime (`,"time":"2024-05-01T12:00:00.000Z"`), with the cheaper isoString: one per line, one line per request. */
export const isoTime = (): string => `,"time":"${isoString(new Date())}"`;

/** Fastify names its requests itself (`req-1`); make it use our request id so every layer agrees. */
@Injectable()
class FastifyRequestIds implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const adapter = this.adapterHost.httpAdapter;
    if (adapter?.getType() !== 'fastify') return;
    (adapter.getInstance() as { setGenReqId(fn: (req: LoggedRequest) => string): unknown }).setGenReqId((req) => ensureRequestId(req));
  }
}

@Module({ providers: [FastifyRequestIds] })
class RequestIdAlignmentModule {}

/**
 * JSON logs through pino (JsonLogger), for the standalone app only (a host app keeps its own logger).
 * One line per request (`request completed`, level by status) carrying `request_id` — the very id
 * of `X-Request-Id` and of the error envelope — and every log written while serving the request
 * carries it too. Bodies are never logged; credentials in headers and URLs are redacted.
 */
export function structuredLogModules(options: StructuredLogOptions): (Type<unknown> | DynamicModule)[] {
  const stream = options.stream ?? pino.destination({ dest: 1, sync: true });
  const base = { level: options.level, timestamp: isoTime, formatters: { level: (label: string) => ({ level: label }) } };
  const logger = pino({ ...base, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, stream);
  // The access lines' writer: the same logger and stream without redaction, the middleware
  // censoring the credential headers of each line itself (REDACTED_PATHS are those headers).
  const lineLogger = pino(base, stream);
  return [
    RequestIdAlignmentModule,
    // Gives the request its id and runs the rest of it with its logger (req.log) as JsonLogger's,
    // in one middleware: also the standalone app's request-id middleware.
    AccessLogModule.forRoot(logger, lineLogger),
    // Nest's logger (app.useLogger(app.get(JsonLogger))): `logger` for the logs written outside a request.
    JsonLoggerModule.forRoot(logger),
  ];
}

const ACCESS_LOG = Symbol('trendhooks:access-log');
/** Whether the access log went on the express app when the module was built (expressAppLayer). */
const ACCESS_LOG_ON_EXPRESS = Symbol('trendhooks:access-log-on-express');
type AccessLog = ReturnType<typeof accessLogMiddleware>;

/**
 * Mounts the access-log middleware (accessLogMiddleware) on every request: on the express app
 * itself (expressAppLayer, as the HTTP metrics), else (fastify, or an app built from a compiled
 * testing module) as a Nest middleware.
 */
@Module({})
class AccessLogModule implements NestModule {
  constructor(
    @Inject(ACCESS_LOG) private readonly accessLog: AccessLog,
    @Inject(ACCESS_LOG_ON_EXPRESS) private readonly onExpress: ExpressAppLayerState,
  ) {}

  static forRoot(logger: Logger, lineLogger: Logger): DynamicModule {
    const accessLog = accessLogMiddleware(logger, { lineLogger, ignore: isQuietPath, runInContext: bindRequestLogger });
    return {
      module: AccessLogModule,
      providers: [
        { provide: ACCESS_LOG, useValue: accessLog },
        expressAppLayer(ACCESS_LOG_ON_EXPRESS, [], () => accessLog),
      ],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    if (this.onExpress.mounted()) return;
    consumer.apply(this.accessLog).forRoutes('*path');
  }
}

/** Logs written while serving the request go to its req.log, which carries its id. */
function bindRequestLogger(req: AccessLoggedRequest, next: () => void): void {
  runWithRequestLogger(req.log!, next);
}

@Module({})
class JsonLoggerModule {
  static forRoot(logger: Logger): DynamicModule {
    return { module: JsonLoggerModule, providers: [{ provide: JsonLogger, useValue: new JsonLogger(logger) }], exports: [JsonLogger] };
  }
}

/** Nest's boot chatter (a line per module and per route): useful when debugging, noise at info. */
const BOOT_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication', 'NestApplicationContext']);

/**
 * The JSON logger with Nest's own start-up lines (route table, module list) moved to `debug`, so an
 * operator's `info` log starts with trendhooks' one-line summary instead of ~50 lines of routes.
 */
export class QuietBootLogger implements LoggerService {
  constructor(private readonly inner: LoggerService) {}

  log(message: unknown, ...rest: unknown[]): void {
    const context = rest[rest.length - 1];
    if (typeof context === 'string' && BOOT_CONTEXTS.has(context) && this.inner.debug) return this.inner.debug(message, ...rest);
    this.inner.log(message, ...rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.inner.error(message, ...rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.inner.warn(message, ...rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.inner.debug?.(message, ...rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.inner.verbose?.(message, ...rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    (this.inner.fatal ?? this.inner.error).call(this.inner, message, ...rest);
  }
}
