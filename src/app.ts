import { INestApplication, INestApplicationContext, Logger, LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { setFlagsFromString } from 'node:v8';
import { DataSource } from 'typeorm';
import { AppModule, AppModuleOverrides, Role } from './app.module';
import { exitOnSignals } from './common/graceful-shutdown';
import { QuietBootLogger } from './common/logging';
import { JsonLogger } from './common/json-logger';
import { describeDatabase, type AppConfig } from './config/config';
import { dataSourceOptions, runMigrations } from './database/data-source';
import { entitiesFor } from './entities';
import { installFastifyJsonBody, MAX_BODY_BYTES } from './common/json-body.middleware';
import { answerClientError } from './common/client-error';
import { applyHttpLimits } from './common/http-limits';
import type { Server } from 'node:http';
import { buildOpenApiDocument, OPENAPI_DOCUMENT_REASON } from './openapi/document';
import { OpenApiDocumentHolder } from './openapi/docs.controller';
import { MetricsListener } from './metrics/metrics.listener';
import { isInstalled, MissingPackageError, requireOptional } from './common/optional-package';

/** One `info` line at start: what this process is, where its data lives, where it listens (API and metrics), how hard it sends. */
function startupSummary(config: AppConfig, role: Role, listener: string | null, metrics: string | null): void {
  const worker = role === 'all' || role === 'worker';
  new Logger('trendhooks').log({
    msg: `trendhooks ${role} started${listener ? ` on ${listener}` : ''}${metricsNote(metrics)}`,
    role,
    database: describeDatabase(config),
    listener,
    metrics,
    worker_concurrency: worker ? config.delivery.concurrency : null,
  });
}

/** The HTTP listener could not be opened (a bad HOST, a PORT in use): an operator's one-line error. */
export class ListenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ListenError';
  }
}

/**
 * How far V8 lets the old generation grow past what the last full collection kept, in percent.
 * Each delivery's short-lived objects (its request, its timer, its outcome) are still
 * in flight at two young collections often enough to be promoted; by default V8 then lets the
 * old generation reach up to 4× the live heap before collecting it, which made the peak RSS of a
 * 50,000-delivery run 250–300 MB with a live heap of ~40 MB (#16). At 60 % the full collections
 * come sooner and cost little, most of what they find being garbage: 30 % kept the same peak for
 * more CPU per delivery, measured side by side.
 */
export const HEAP_GROWING_PERCENT = 60;

/**
 * The process's V8 settings of the standalone service, set here rather than on a command line so
 * `npm start`, the Docker image, `trendhooks serve` and the benchmarks all run with them. Read at
 * every full collection, so setting it at start up takes effect. An operator's own
 * `--heap-growing-percent` (node flags or NODE_OPTIONS) wins. Returns the flags it set.
 */
// NODE_OPTIONS is node's own setting, not the app's configuration: loadConfig has no business with it.
// eslint-disable-next-line no-restricted-properties
export function tuneHeap(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].some((f) => /^--heap[-_]growing[-_]percent(=|$)/.test(f));
  if (given) return [];
  const flags = [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`];
  for (const flag of flags) setFlagsFromString(flag);
  return flags;
}

export interface CreateAppOptions extends AppModuleOverrides {
  /** A Nest logger instead of the JSON logs (tests, benchmarks), unless `logs` asks for those too. */
  logger?: LoggerService | LogLevel[] | false;
}

/** Applies pending migrations on a short-lived connection, before any module (the worker) starts. */
export async function migrateDatabase(config: AppConfig): Promise<string[]> {
  const ds = new DataSource(dataSourceOptions(config.database, entitiesFor(config.hostSchema), config.hostSchema));
  await ds.initialize();
  try {
    return await runMigrations(ds);
  } finally {
    await ds.destroy();
  }
}

/** Builds the standalone app (used by `serve`, `npm start` and the e2e suites alike) and migrates its database. */
export async function createApp(config: AppConfig, options: CreateAppOptions = {}): Promise<INestApplication> {
  tuneHeap();
  await migrateDatabase(config);
  // JSON logs, unless the caller brings its own Nest logger (the test suites, which stay quiet).
  const logs = options.logs ?? (options.logger === undefined ? {} : false);
  const module = AppModule.forRoot(config, { ...options, logs });
  const nestOptions = {
    // Bodies are read by the modules that accept them (JsonBodyMiddleware: JSON only, 64 KiB).
    bodyParser: false,
    logger: logs === false ? (options.logger ?? (['error', 'warn', 'log'] as LogLevel[])) : undefined,
    // Boot messages wait for the JSON logger instead of going out in Nest's format.
    bufferLogs: logs !== false,
    abortOnError: false,
  };
  let app: INestApplication;
  if (config.http.adapter === 'fastify') {
    // Loaded only when chosen, so express processes never load fastify (nor need it installed).
    const { FastifyAdapter } = requireOptional<typeof import('@nestjs/platform-fastify')>('@nestjs/platform-fastify', 'HTTP_ADAPTER is fastify');
    // Requests the HTTP parser refuses (a NUL in a header, a bad chunk size) get the envelope too.
    const adapter = new FastifyAdapter({ bodyLimit: MAX_BODY_BYTES, clientErrorHandler: answerClientError, trustProxy: (config.http.trustProxy ?? false) as boolean });
    // Fastify parses bodies itself, after middleware; this parser mirrors JsonBodyMiddleware.
    installFastifyJsonBody(adapter.getInstance());
    app = await NestFactory.create<NestFastifyApplication>(module, adapter, nestOptions);
  } else {
    const express = await NestFactory.create<NestExpressApplication>(module, nestOptions);
    express.disable('x-powered-by');
    // TRUST_PROXY: who may name the client in X-Forwarded-For (req.ip); nobody unless configured.
    express.set('trust proxy', config.http.trustProxy ?? false);
    express.getHttpServer().on('clientError', answerClientError);
    app = express;
  }
  // Slow clients (headers or a body trickled in, idle sockets) are cut off on both adapters alike.
  applyHttpLimits(app.getHttpServer() as Server, config.http.limits);
  if (logs !== false) {
    app.useLogger(new QuietBootLogger(app.get(JsonLogger)));
    // Nest flushes the boot buffer only in listen(); an app that is never listened on (tests) would keep buffering.
    app.flushLogs();
  }
  app.get(OpenApiDocumentHolder).setBuilder(() => buildOpenApiDocument(app));
  if (logs !== false && !isInstalled('@nestjs/swagger')) {
    // The API works without it; GET /openapi.json and /docs answer 404 with the same line.
    new Logger('trendhooks').warn(new MissingPackageError('@nestjs/swagger', OPENAPI_DOCUMENT_REASON).message);
  }
  return app;
}

/**
 * `npm start` / `trendhooks serve [--role]`: roles with the API listen on HOST:PORT; a worker-only
 * process runs without an HTTP listener.
 */
export async function serve(config: AppConfig, role: Role = 'all'): Promise<INestApplicationContext> {
  if (role === 'worker' || role === 'pipeline') {
    tuneHeap();
    await migrateDatabase(config);
    // createApplicationContext starts the worker at once, so migrations ran just before.
    const ctx = await NestFactory.createApplicationContext(AppModule.forRoot(config, { role }), { bufferLogs: true });
    ctx.useLogger(new QuietBootLogger(ctx.get(JsonLogger)));
    exitOnSignals(ctx, config.ops.shutdownTimeoutMs);
    const metrics = ctx.get(MetricsListener).url;
    startupSummary(config, role, null, metrics);
    // Plain readiness line (whatever LOG_LEVEL): supervisors and the reliability suites wait for it.
    console.log(`trendhooks ${role} running (${describeDatabase(config)})${metricsNote(metrics)}`);
    return ctx;
  }
  const app = await createApp(config, { role });
  // The modules start first, outside the listen error below: a refusal to start (e.g. a key ring
  // that does not fit the database) keeps its own message instead of blaming HOST/PORT.
  try {
    await app.init();
  } catch (err) {
    await app.close().catch(() => undefined);
    throw err;
  }
  try {
    await app.listen(config.http.port, config.http.host);
  } catch (err) {
    await app.close().catch(() => undefined);
    // Not a database problem: name the settings at fault.
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new ListenError(`cannot listen on ${config.http.host}:${config.http.port} (HOST/PORT): ${code}`);
  }
  exitOnSignals(app, config.ops.shutdownTimeoutMs);
  const metrics = app.get(MetricsListener).url;
  startupSummary(config, role, `http://${config.http.host}:${config.http.port}`, metrics);
  console.log(`trendhooks ${role} listening on http://${config.http.host}:${config.http.port} (${describeDatabase(config)})${metricsNote(metrics)}`);
  return app;
}

function metricsNote(metrics: string | null): string {
  return metrics ? `, metrics on ${metrics}` : ', no metrics listener (METRICS_PORT unset)';
}
