import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { answerClientError } from '../common/client-error';
import { Metrics } from './metrics.service';

export interface MetricsServerOptions {
  /** 0: any free port (tests). */
  port: number;
  /** Loopback unless the scraper is elsewhere: the series name every tracked subreddit. */
  host: string;
}

export interface MetricsServer {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

function envelope(res: http.ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  const requestId = `req_${randomUUID().replace(/-/g, '')}`;
  const body = JSON.stringify({ error: { code, message, request_id: requestId } });
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': requestId, 'Cache-Control': 'no-store', ...headers });
  res.end(body);
}

/**
 * Serves `GET /metrics` (Prometheus text) of `metrics` on a listener of its own, never on the API's:
 * the series name every tracked subreddit and a scrape queries the database, so they are for the
 * operator's scraper, not for tenants. Everything else there is a 404 in the API's error envelope.
 * A host app that wants its own scrape endpoint starts one with this too.
 */
export async function startMetricsServer(metrics: Metrics, options: MetricsServerOptions): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') return envelope(res, 404, 'NOT_FOUND', `no route ${req.method} ${path.slice(0, 200)}`);
    if (req.method !== 'GET' && req.method !== 'HEAD') return envelope(res, 405, 'METHOD_NOT_ALLOWED', `${req.method} is not allowed on /metrics; use GET`, { Allow: 'GET, HEAD' });
    metrics.scrape().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': Registry.PROMETHEUS_CONTENT_TYPE, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => envelope(res, 500, 'INTERNAL_ERROR', 'internal error'),
    );
  });
  server.on('clientError', answerClientError);
  // Scrapes are small and frequent; a stuck scraper must not hold sockets for ever.
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    host: options.host,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Prometheus keeps its connection alive between scrapes: do not wait for it.
        server.closeAllConnections();
      }),
  };
}

/**
 * The standalone app's metrics listener (METRICS_PORT/METRICS_HOST): started with the app, in every
 * role (a worker's delivery series too), closed on shutdown. Provided by AppModule only; the
 * MetricsModule a host app imports serves nothing.
 */
@Injectable()
export class MetricsListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server?: MetricsServer;

  constructor(
    private readonly metrics: Metrics,
    private readonly options: { port: number | null; host: string },
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.options.port === null) return;
    this.server = await startMetricsServer(this.metrics, { port: this.options.port, host: this.options.host });
    this.logger.log(`metrics on ${this.url}`);
  }

  /** Where Prometheus scrapes, or null without METRICS_PORT. */
  get url(): string | null {
    if (!this.server) return null;
    const host = this.server.host.includes(':') ? `[${this.server.host}]` : this.server.host;
    return `http://${host}:${this.server.port}/metrics`;
  }

  /** The bound port (METRICS_PORT=0 picks one), or null without a listener. */
  get port(): number | null {
    return this.server?.port ?? null;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server?.close();
    this.server = undefined;
  }
}
