import { Injectable, NestMiddleware, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Metrics } from './metrics.service';

/** Label of requests no route matched (404s): never the raw URL, which would be unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

type ExpressRequest = IncomingMessage & { route?: { path?: unknown }; baseUrl?: string };

/** Express: times every request and labels it with the route pattern express matched (`/v1/webhooks/:webhook_id`). */
@Injectable()
export class HttpMetricsMiddleware implements NestMiddleware {
  constructor(
    private readonly metrics: Metrics,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  use(req: ExpressRequest, res: ServerResponse, next: () => void): void {
    // Under fastify this middleware sees only the Node request; FastifyHttpMetrics records there.
    if (this.adapterHost.httpAdapter?.getType() !== 'express') return next();
    const start = process.hrtime.bigint();
    res.once('finish', () => {
      const path = req.route?.path;
      const route = typeof path === 'string' ? `${req.baseUrl ?? ''}${path}` : UNMATCHED_ROUTE;
      this.metrics.httpRequest(req.method ?? 'GET', route, res.statusCode, Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  }
}

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
