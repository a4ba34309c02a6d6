import { Inject, Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { METRICS_OPTIONS, MetricsModuleOptions } from './metrics.options';

export type DeliveryOutcome = 'delivered' | 'transient' | 'permanent';

/** A gauge another module owns: `collect` answers its value at each scrape, or null to keep the last one. */
export interface GaugeSource {
  name: string;
  help: string;
  collect: () => Promise<number | null> | number | null;
}

/** A gauge with one label another module owns: `collect` answers a value per label value (missing ones are 0), or null to keep the last ones. */
export interface LabelledGaugeSource {
  name: string;
  help: string;
  label: string;
  /** Every value the label takes, so each series exists (at 0) from the first scrape. */
  values: readonly string[];
  collect: () => Promise<ReadonlyMap<string, number> | null>;
}

/**
 * The Prometheus series of one app, on a registry of its own (never prom-client's global one), so
 * a host app's metrics and several apps in one process do not collide. Inject it with
 * `@Optional()`: code that records into it must keep working where MetricsModule is absent.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly deliveries: Counter<'outcome'>;
  private readonly attemptDuration: Histogram<'outcome'>;
  private readonly events: Counter<'type'>;
  private readonly webhooksDisabled: Counter<'reason'>;
  private readonly pollerErrors: Counter<'subreddit'>;
  private readonly postsUnreachable: Counter<'subreddit'>;

  constructor(@Inject(METRICS_OPTIONS) options: MetricsModuleOptions) {
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
    this.webhooksDisabled = new Counter({ name: 'trendhooks_webhooks_disabled_total', help: 'Webhooks disabled automatically, by reason (gone: 410; failing)', labelNames: ['reason'], registers });
    this.pollerErrors = new Counter({ name: 'trendhooks_poller_errors_total', help: 'Failed polls of a subreddit', labelNames: ['subreddit'], registers });
    this.postsUnreachable = new Counter({
      name: 'trendhooks_reddit_posts_unreachable_total',
      help: "Posts of a subreddit estimated lost behind Reddit's 1,000-item listing cap after a gap in its reads",
      labelNames: ['subreddit'],
      registers,
    });
    // Created at once so every series exists from the first scrape (rate() needs the zero).
    for (const outcome of ['delivered', 'transient', 'permanent'] as const) this.deliveries.inc({ outcome }, 0);
  }

  /**
   * A series whose value lives elsewhere (e.g. the delivery queue's depth), read at each scrape:
   * the module that owns it registers it, so this one imports none of them.
   */
  registerGauge(source: GaugeSource): void {
    new Gauge({
      name: source.name,
      help: source.help,
      registers: [this.registry],
      async collect() {
        const value = await source.collect();
        if (value !== null) this.set(value);
      },
    });
  }

  /** A series per value of one label whose values live elsewhere, read at each scrape (e.g. tracked subreddits by status). */
  registerLabelledGauge(source: LabelledGaugeSource): void {
    new Gauge({
      name: source.name,
      help: source.help,
      labelNames: [source.label],
      registers: [this.registry],
      async collect() {
        const values = await source.collect();
        if (values === null) return;
        for (const v of source.values) this.set({ [source.label]: v }, values.get(v) ?? 0);
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

  /** A webhook the worker disabled on its own (`gone` or `failing`). */
  webhookDisabled(reason: string): void {
    this.webhooksDisabled.inc({ reason });
  }

  pollerError(subreddit: string): void {
    this.pollerErrors.inc({ subreddit });
  }

  redditPostsUnreachable(subreddit: string, n: number): void {
    this.postsUnreachable.inc({ subreddit }, n);
  }

  /** The exposition text of every series (`GET /metrics`). */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}
