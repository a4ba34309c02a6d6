import { Injectable, OnModuleInit, Provider } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Metrics } from './metrics.service';

/** Label of requests no route matched (404s): never the raw URL, which would be unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

type ExpressRequest = IncomingMessage & { route?: { path?: unknown }; baseUrl?: string };

/** Times one express request and labels it with the route pattern express matched (`/v1/webhooks/:webhook_id`). */
export function expressRecorder(metrics: Metrics) {
  return function trendhooksHttpMetrics(req: ExpressRequest, res: ServerResponse, next: () => void): void {
    const start = process.hrtime.bigint();
    res.once('finish', () => {
      const path = req.route?.path;
      const route = typeof path === 'string' ? `${req.baseUrl ?? ''}${path}` : UNMATCHED_ROUTE;
      metrics.httpRequest(req.method ?? 'GET', route, res.statusCode, Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
}

/**
 * Express: the recorder goes straight on the express app when Nest builds the module (before
 * `init()` registers the routes, so it runs ahead of them), like the JSON body reader: as a Nest
 * middleware on every route it was one more Nest layer per request (path matching, Nest's proxy
 * and its exception zone), about 2 % of the API's CPU per request in the bench/api profile. It
 * times every request of the app, 404s included, as the middleware did. Fastify: FastifyHttpMetrics.
 * Answers whether it did: an app built from a compiled testing module (`Test.createTestingModule`)
 * has no HTTP adapter yet when its providers are built, and MetricsModule then mounts the recorder
 * as a Nest middleware instead.
 */
export const EXPRESS_HTTP_METRICS = 'trendhooks:express-http-metrics';
export const expressHttpMetricsProvider: Provider = {
  provide: EXPRESS_HTTP_METRICS,
  inject: [Metrics, { token: HttpAdapterHost, optional: true }],
  useFactory: (metrics: Metrics, host?: HttpAdapterHost) => {
    const adapter = host?.httpAdapter;
    // An application context without HTTP (the worker), or fastify.
    if (adapter?.getType() !== 'express') return false;
    adapter.use(expressRecorder(metrics));
    return true;
  },
};

interface FastifyLike {
  addHook(
    name: 'onResponse',
    hook: (request: { method: string; routeOptions?: { url?: string } }, reply: { statusCode: number; elapsedTime: number }, done: () => void) => void,
  ): unknown;
}

/** Fastify: the same series from an onResponse hook, where fastify knows the matched route pattern. */
@Injectable()
export class FastifyHttpMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: Metrics,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onModuleInit(): void {
    const adapter = this.adapterHost.httpAdapter;
    if (adapter?.getType() !== 'fastify') return;
    (adapter.getInstance() as FastifyLike).addHook('onResponse', (request, reply, done) => {
      this.metrics.httpRequest(request.method, request.routeOptions?.url ?? UNMATCHED_ROUTE, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
  }
}
