import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DeliveryRepository } from '../delivery/delivery.repository';
import { METRICS_OPTIONS, MetricsModuleOptions } from './metrics.options';

export type DeliveryOutcome = 'delivered' | 'transient' | 'permanent';

type QueueStats = Awaited<ReturnType<DeliveryRepository['queueStats']>>;

/** A scrape reads both queue gauges; one query serves both. */
const QUEUE_STATS_MAX_AGE_MS = 1000;

/**
 * The Prometheus series of one app, on a registry of its own (never prom-client's global one), so
 * a host app's metrics and several apps in one process do not collide. Inject it with
 * `@Optional()`: code that records into it must keep working where MetricsModule is absent.
 */
@Injectable()
export class Metrics implements OnModuleInit {
  readonly registry = new Registry();
  private readonly logger = new Logger('Metrics');
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly deliveries: Counter<'outcome'>;
  private readonly attemptDuration: Histogram<'outcome'>;
  private readonly events: Counter<'type'>;
  private readonly pollerErrors: Counter<'subreddit'>;
  private queueStats?: { at: number; stats: Promise<QueueStats | null> };

  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(METRICS_OPTIONS) options: MetricsModuleOptions,
  ) {
    const registers = [this.registry];
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.deliveries = new Counter({ name: 'trendhooks_deliveries_total', help: 'Delivery attempts by outcome', labelNames: ['outcome'], registers });
    this.attemptDuration = new Histogram({
      name: 'trendhooks_delivery_attempt_duration_seconds',
      help: 'Time of one delivery attempt, DNS check to response, by outcome',
      labelNames: ['outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.events = new Counter({ name: 'trendhooks_events_total', help: 'Events written (and fanned out) by type', labelNames: ['type'], registers });
    this.pollerErrors = new Counter({ name: 'trendhooks_poller_errors_total', help: 'Failed polls of a subreddit', labelNames: ['subreddit'], registers });
    // Created at once so every series exists from the first scrape (rate() needs the zero).
    for (const outcome of ['delivered', 'transient', 'permanent'] as const) this.deliveries.inc({ outcome }, 0);
  }

  /** The queue gauges exist only where the delivery queue does (not in a host app without DeliveryModule). */
  onModuleInit(): void {
    let repo: DeliveryRepository;
    try {
      repo = this.moduleRef.get(DeliveryRepository, { strict: false });
    } catch {
      return;
    }
    const stats = () => this.readQueueStats(repo);
    new Gauge({
      name: 'trendhooks_delivery_queue_depth',
      help: 'Deliveries due now and not being sent (pending, or leased by a worker that stopped)',
      registers: [this.registry],
      async collect() {
        const s = await stats();
        if (s) this.set(s.due);
      },
    });
    new Gauge({
      name: 'trendhooks_delivery_oldest_due_age_seconds',
      help: 'How long the oldest due delivery has been waiting (0 when none is due)',
      registers: [this.registry],
      async collect() {
        const s = await stats();
        if (s) this.set(s.oldestDueMs === null ? 0 : s.oldestDueMs / 1000);
      },
    });
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpDuration.observe({ method, route, status: String(status) }, seconds);
  }

  deliveryAttempt(outcome: DeliveryOutcome, seconds: number): void {
    this.deliveries.inc({ outcome });
    this.attemptDuration.observe({ outcome }, seconds);
  }

  eventEmitted(type: string): void {
    this.events.inc({ type });
  }

  pollerError(subreddit: string): void {
    this.pollerErrors.inc({ subreddit });
  }

  /** The exposition text of every series (`GET /metrics`). */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  // A database outage must not fail the whole scrape: the gauges keep their last values (null → not set).
  private readQueueStats(repo: DeliveryRepository): Promise<QueueStats | null> {
    const now = Date.now();
    if (!this.queueStats || now - this.queueStats.at > QUEUE_STATS_MAX_AGE_MS) {
      const stats = repo.queueStats(new Date(now)).catch((err: Error) => {
        this.logger.warn(`queue metrics unavailable: ${err.message}`);
        return null;
      });
      this.queueStats = { at: now, stats };
    }
    return this.queueStats.stats;
  }
}
