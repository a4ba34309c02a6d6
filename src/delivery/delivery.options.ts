import { ConfigurableModuleBuilder, Inject } from '@nestjs/common';
import { INT_SETTINGS, checkIntOption } from '../config/settings';
import { globalOptions } from '../core/configured-module';
import { CircuitOptions, resolveCircuitOptions } from './circuit/circuit-policy';
import { readReceiverCa } from './transport/receiver-ca';
import type { SubscriptionSource } from './subscription-source';
import type { DeliveryTransport } from './transport/delivery-transport';
import type { OnWebhookDisabled } from '../events/webhook-disabled';

export interface DeliveryModuleOptions {
  /** Run the worker in this process (role `worker` / `all`). Default true. */
  worker?: boolean;
  /**
   * Extra trusted CA (PEM) for receivers with private certificates. When not given, the PEM of the
   * file DELIVERY_CA_FILE names in the process environment, as the standalone service reads it (what
   * `trendhooks listen --print-env` prints for its self-signed receiver); null: none, whatever the
   * environment says.
   */
  ca?: string | Buffer | null;
  /** Total time of one attempt: connect, headers and body. Default 10 000 ms. */
  timeoutMs?: number;
  /**
   * How long a claimed delivery stays with its worker before others may take it, unless the
   * worker renews it: a live worker renews the leases of every delivery it holds every
   * `leaseRenewMs`, for as long as the attempt lasts, so the lease only has to outlast a renewal
   * or two, not an attempt. It bounds how long a dead worker's deliveries wait. Default 3000 ms.
   */
  leaseMs?: number;
  /** How often a worker renews its leases (one statement for all of them). Default a third of `leaseMs`. */
  leaseRenewMs?: number;
  /** Parallel sends per worker. Default 64. */
  concurrency?: number;
  /**
   * Slots of each worker that no single customer and no single destination (host and port) may
   * take: one customer's endpoints that hang (or whose names hang in DNS) hold at most
   * `concurrency - fairReserve` slots, the rest stay for everyone else. Default an eighth of
   * `concurrency` (at least 1 when `concurrency` > 1).
   */
  fairReserve?: number;
  /**
   * Attempts of one customer that may wait for DNS at once in a worker (their lookups at the
   * nameservers; cached answers do not count). Past it an attempt fails at once as a transient
   * `dns_failure`, retried on the schedule, instead of holding a slot for the DNS timeout.
   * Default an eighth of `concurrency` (at least 1); at most `concurrency`.
   */
  dnsLookupsPerCustomer?: number;
  /** Rows per claim. Default 64. */
  batchSize?: number;
  /**
   * The circuit breaker per customer and destination (src/delivery/README.md): after `failures`
   * attempts in a row that got no answer (timeouts, connect, DNS, TLS), at most `throttle` of a
   * worker's attempts go there at once; after as many more, its deliveries are put off (uncharged,
   * holding no slot) for `pauseMs`, doubling at each new opening up to `maxPauseMs`, then one probe
   * decides. Defaults 5, 2, 30 000 ms, 600 000 ms; `failures: 0` switches it off.
   */
  circuit?: Partial<CircuitOptions>;
  /** Fallback poll when no wake-up arrives. Default 1000 ms. */
  pollIntervalMs?: number;
  /** Seconds between attempts; its length + 1 is the number of attempts. Default 5 s … 10 h (8 attempts). */
  retryScheduleSeconds?: readonly number[];
  /** Jitter source, for tests. */
  random?: () => number;
  /**
   * Who receives each emitted event. Default: the webhooks created through the API
   * (WebhookTableSubscriptions, matched inside the emit statement). A host's own source answers
   * endpoint ids registered with DeliveryEndpoints; see SubscriptionSource.
   */
  subscriptions?: SubscriptionSource;
  /**
   * How deliveries leave this process, instead of the HTTPS POST (`HttpsWebhookTransport`): the
   * host's own `DeliveryTransport` instance, e.g. a queue producer. Build it in `forRootAsync`'s
   * `useFactory` to give it the host's providers; Nest calls its lifecycle hooks (such as
   * `onApplicationShutdown`, after the worker's attempts in flight have finished) as it does a
   * provider's. The worker still leases, retries and records each attempt, and the request
   * carries what trendhooks owns: the body, the signing secrets (`signDelivery` builds the
   * Standard Webhooks headers from them) and `confirm()`, which the transport calls before it
   * sends. The destination's `url` is the one stored with the webhook, checked against the SSRF
   * policy when it was created or changed, not on each attempt: that re-check (DNS re-resolved,
   * the checked address connected to) is the HTTPS transport's, and a custom transport that
   * connects to `url` itself calls `SsrfPolicy.checkDestination` first. The ca, DNS share and
   * connection options apply to the HTTPS transport only.
   */
  transport?: DeliveryTransport;
  /**
   * How long every attempt of a webhook must have failed before it is disabled (`failing`), in ms
   * (lifecycle/disable-rule.ts: failures spread over at least 3 fifths of it, and one delivered
   * attempt starts it again). Default 5 days; 0 or null: only a `410 Gone` answer disables.
   */
  disableAfterMs?: number | null;
  /**
   * Called once for each webhook (or host endpoint) the worker disables on its own, after its
   * pending deliveries were cancelled: `reason` `gone` (410) or `failing`. Not awaited by the
   * worker; a rejection is logged. For the operators' stored `webhook.disabled` notification, see
   * `operations`.
   */
  onWebhookDisabled?: OnWebhookDisabled;
  /**
   * The operators' `webhook.disabled` notifications (the standalone's OPERATIONS_WEBHOOK_URL and
   * _SECRET): each disable is stored (`operations_notifications`) and sent by a worker process,
   * retried on `retryScheduleSeconds` under the same `webhook-id`, so a restart loses none. At most
   * one per webhook every `intervalMs` (default 1 h): the disables in between are folded into the
   * next one (`data.folded`). The URL is the operator's, not held to the customers' SSRF policy.
   */
  operations?: {
    url: string;
    secret: string;
    ca?: string | Buffer | null;
    intervalMs?: number;
    /** How often a worker looks for due notifications besides its own wake-ups (default 5 s). */
    pollMs?: number;
    /** How long sent notifications are kept before they are deleted (default 7 days). */
    retentionMs?: number;
  };
}

export const { ConfigurableModuleClass: DeliveryConfigurableModule, MODULE_OPTIONS_TOKEN: DELIVERY_OPTIONS, OPTIONS_TYPE: DELIVERY_OPTIONS_TYPE, ASYNC_OPTIONS_TYPE: DELIVERY_OPTIONS_ASYNC_TYPE } =
  new ConfigurableModuleBuilder<DeliveryModuleOptions>()
    .setClassMethodName('forRoot')
    // The options only are global (globalOptions); the module is imported where it is needed.
    .setExtras({ isGlobal: false }, (definition) => globalOptions(definition, checkDeliveryOptions))
    .build();

/** `@InjectDeliveryOptions() options: DeliveryModuleOptions`: what forRoot / forRootAsync was given. */
export const InjectDeliveryOptions = (): ParameterDecorator & PropertyDecorator => Inject(DELIVERY_OPTIONS);

/** Default `leaseMs`: with renewals every second, a dead worker's deliveries are due again within 3 s. */
export const DEFAULT_DELIVERY_LEASE_MS = 3000;

export interface ResolvedDeliveryOptions {
  worker: boolean;
  timeoutMs: number;
  leaseMs: number;
  leaseRenewMs: number;
  concurrency: number;
  fairReserve: number;
  dnsLookupsPerCustomer: number;
  batchSize: number;
  pollIntervalMs: number;
  circuit: CircuitOptions;
}

export function resolveDeliveryOptions(o: DeliveryModuleOptions): ResolvedDeliveryOptions {
  const leaseMs = o.leaseMs ?? DEFAULT_DELIVERY_LEASE_MS;
  const r = {
    worker: o.worker ?? true,
    timeoutMs: o.timeoutMs ?? 10_000,
    leaseMs,
    leaseRenewMs: o.leaseRenewMs ?? Math.floor(leaseMs / 3),
    concurrency: o.concurrency ?? 64,
    fairReserve: 0,
    dnsLookupsPerCustomer: 0,
    batchSize: o.batchSize ?? 64,
    pollIntervalMs: o.pollIntervalMs ?? 1000,
    circuit: resolveCircuitOptions(o.circuit),
  };
  r.fairReserve = o.fairReserve ?? (r.concurrency > 1 ? Math.max(1, Math.floor(r.concurrency / 8)) : 0);
  if (!Number.isInteger(r.fairReserve) || r.fairReserve < 0 || r.fairReserve >= r.concurrency) {
    throw new Error(`delivery fair reserve (${r.fairReserve}) must be a whole number of slots below the concurrency (${r.concurrency})`);
  }
  r.dnsLookupsPerCustomer = o.dnsLookupsPerCustomer ?? Math.max(1, Math.floor(r.concurrency / 8));
  if (!Number.isInteger(r.dnsLookupsPerCustomer) || r.dnsLookupsPerCustomer < 1 || r.dnsLookupsPerCustomer > r.concurrency) {
    throw new Error(`delivery DNS lookups per customer (${r.dnsLookupsPerCustomer}) must be a whole number from 1 to the concurrency (${r.concurrency})`);
  }
  // The attempt timeout is independent of the lease (renewals carry a long attempt); two renewals
  // must fit in one lease, so that one that is late or skips a busy row still leaves the next in time.
  if (!(r.leaseRenewMs > 0) || r.leaseRenewMs * 2 > r.leaseMs) {
    throw new Error(`delivery lease renewal interval (${r.leaseRenewMs} ms) must be positive and at most half the lease (${r.leaseMs} ms)`);
  }
  return r;
}

/**
 * DeliveryModule's options, checked at start with the ranges of the standalone's DELIVERY_*
 * settings, then resolved once (the fair reserve, DNS share, lease renewal and circuit checks), so a
 * bad figure stops the start naming the setting instead of the worker failing later.
 */
export function checkDeliveryOptions(o: DeliveryModuleOptions): void {
  const what = (option: string) => `DeliveryModule's ${option}`;
  const s = INT_SETTINGS;
  checkIntOption(s.deliveryTimeoutMs, o.timeoutMs, what('timeoutMs'));
  checkIntOption(s.deliveryLeaseMs, o.leaseMs, what('leaseMs'));
  checkIntOption(s.deliveryConcurrency, o.concurrency, what('concurrency'));
  checkIntOption(s.deliveryBatchSize, o.batchSize, what('batchSize'));
  checkIntOption(s.deliveryPollIntervalMs, o.pollIntervalMs, what('pollIntervalMs'));
  checkIntOption(s.deliveryCircuitFailures, o.circuit?.failures, what('circuit.failures'));
  checkIntOption(s.deliveryCircuitThrottle, o.circuit?.throttle, what('circuit.throttle'));
  checkIntOption(s.deliveryCircuitPauseMs, o.circuit?.pauseMs, what('circuit.pauseMs'));
  checkIntOption(s.deliveryCircuitMaxPauseMs, o.circuit?.maxPauseMs, what('circuit.maxPauseMs'));
  if (o.disableAfterMs) checkIntOption(s.webhookDisableAfterMs, o.disableAfterMs, what('disableAfterMs'));
  for (const [key, min] of [['intervalMs', 0], ['pollMs', 100], ['retentionMs', 0]] as const) {
    const v = o.operations?.[key];
    if (v !== undefined && (!Number.isInteger(v) || v < min)) throw new Error(`${what(`operations.${key}`)} must be a whole number of milliseconds, ${min} or more`);
  }
  try {
    resolveDeliveryOptions(o);
  } catch (err) {
    throw new Error(`DeliveryModule: ${(err as Error).message}`, { cause: err });
  }
}

/** The receiver CA of a DeliveryModule, and where it came from (for the boot log). */
export interface ReceiverCa {
  ca: string | Buffer | undefined;
  /** The DELIVERY_CA_FILE it was read from; null when the option gave it (or none). */
  file: string | null;
}

/**
 * `options.ca` when given (null: none); otherwise DELIVERY_CA_FILE of `env`, read as the standalone
 * reads it (config.ts), so a host app delivers to a receiver `trendhooks listen --print-env` set up
 * without wiring the CA itself. A file that cannot be read, or holds no certificate, stops the app
 * at boot with one line, as it stops the standalone.
 */
export function receiverCaOf(
  options: Pick<DeliveryModuleOptions, 'ca'>,
  // The one setting a module reads from the environment itself: a host's DeliveryModule honours DELIVERY_CA_FILE as the standalone does.
  // eslint-disable-next-line no-restricted-properties
  env: Record<string, string | undefined> = process.env,
  cwd = process.cwd(),
): ReceiverCa {
  if (options.ca !== undefined) return { ca: options.ca ?? undefined, file: null };
  const file = env.DELIVERY_CA_FILE?.trim();
  if (!file) return { ca: undefined, file: null };
  try {
    return { ca: readReceiverCa(file, cwd), file };
  } catch (err) {
    throw new Error(`DELIVERY_CA_FILE: ${(err as Error).message}`, { cause: err });
  }
}
