import { BeforeApplicationShutdown, INestApplicationContext, Inject, Injectable, Logger, OnModuleDestroy, Provider } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';

const DRAIN_OPTIONS = Symbol('trendhooks:http-drain-options');

/**
 * Stops the HTTP listener first on shutdown and lets requests in flight finish, within a bound.
 *
 * Nest would close the server only after every module's destroy and before-shutdown hooks, i.e.
 * after the delivery worker's drain (up to the attempt timeout), accepting new requests all that
 * time. This provider belongs to the root module, whose hooks Nest runs before any imported
 * module's: the listener closes at once, and requests in flight finish while the worker finishes
 * its attempts. The database closes after both (onApplicationShutdown). `graceMs` counts from
 * the moment the listener closes.
 */
@Injectable()
export class HttpDrain implements OnModuleDestroy, BeforeApplicationShutdown {
  private readonly logger = new Logger('Shutdown');
  private server?: Server;
  private closed?: Promise<void>;
  private sweeper?: NodeJS.Timeout;
  private deadline = 0;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(DRAIN_OPTIONS) private readonly options: { graceMs: number },
  ) {}

  onModuleDestroy(): void {
    const server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    if (!server?.listening) return; // not listening (worker role, supertest): nothing to drain
    this.server = server;
    this.deadline = Date.now() + this.options.graceMs;
    this.closed = new Promise((resolve) => server.close(() => resolve()));
    // close() ends idle keep-alive connections once; a connection whose response is still being
    // written becomes idle only later, so sweep until the server has closed.
    this.sweeper = setInterval(() => server.closeIdleConnections(), 50);
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (!this.closed || !this.server) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, this.deadline - Date.now()))));
    const finished = await Promise.race([this.closed.then(() => true), bound]);
    clearTimeout(timer);
    clearInterval(this.sweeper);
    if (!finished) {
      this.logger.warn(`HTTP requests still open after ${this.options.graceMs} ms; closing their connections`);
      this.server.closeAllConnections();
    }
  }
}

/** For the root module's `providers` (not an imported module: its hooks must run first). */
export function httpDrainProviders(options: { graceMs: number }): Provider[] {
  return [{ provide: DRAIN_OPTIONS, useValue: options }, HttpDrain];
}

/**
 * SIGTERM / SIGINT: close the app (HTTP drain, delivery attempts, then connections) and exit 0;
 * exit 1 when that fails or outlasts `graceMs`, or on a second signal. Replaces Nest's
 * enableShutdownHooks(), which re-raises the signal after closing (exit status 143, not 0).
 */
export function exitOnSignals(ctx: INestApplicationContext, graceMs: number): void {
  const logger = new Logger('Shutdown');
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn(`${signal} again: exiting without waiting`);
      process.exit(1);
    }
    stopping = true;
    logger.log(`${signal}: finishing requests and deliveries in flight (at most ${graceMs} ms)`);
    setTimeout(() => {
      logger.error(`shutdown did not finish within ${graceMs} ms; exiting (unfinished deliveries are retried after their lease)`);
      process.exit(1);
    }, graceMs).unref();
    ctx.close().then(
      () => process.exit(0),
      (err: Error) => {
        logger.error(`shutdown failed: ${err.message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
