import { Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expressAppLayer } from '../common/express-app-layer';
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
 * Express: the recorder on the express app itself (expressAppLayer), like the JSON body reader:
 * as a Nest middleware on every route it was one more Nest layer per request, about 2 % of the
 * API's CPU per request in the bench/api profile. It times every request of the app, 404s
 * included. Where it could not go there (an app built from a compiled testing module),
 * MetricsModule mounts it as a Nest middleware. Fastify: FastifyHttpMetrics.
 */
export const EXPRESS_HTTP_METRICS = 'trendhooks:express-http-metrics';
export const expressHttpMetricsProvider = expressAppLayer(EXPRESS_HTTP_METRICS, [Metrics], expressRecorder);

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
