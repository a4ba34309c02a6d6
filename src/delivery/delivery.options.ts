import { ConfigurableModuleBuilder, Inject } from '@nestjs/common';

export interface DeliveryModuleOptions {
  /** Run the worker in this process (role `worker` / `all`). Default true. */
  worker?: boolean;
  /** Extra trusted CA (PEM) for receivers with private certificates. */
  ca?: string | Buffer;
  /** Total time of one attempt: connect, headers and body. Default 10 000 ms. */
  timeoutMs?: number;
  /** How long a claimed delivery stays with its worker before others may take it. Default 60 000 ms. */
  leaseMs?: number;
  /** Parallel sends per worker. Default 64. */
  concurrency?: number;
  /** Rows per claim. Default 64. */
  batchSize?: number;
  /** Fallback poll when no wake-up arrives. Default 1000 ms. */
  pollIntervalMs?: number;
  /** Seconds between attempts; its length + 1 is the number of attempts. Default 5 s … 10 h (8 attempts). */
  retryScheduleSeconds?: readonly number[];
  /** Jitter source, for tests. */
  random?: () => number;
}

export const { ConfigurableModuleClass: DeliveryConfigurableModule, MODULE_OPTIONS_TOKEN: DELIVERY_OPTIONS } =
  new ConfigurableModuleBuilder<DeliveryModuleOptions>()
    .setClassMethodName('forRoot')
    // Global so the trend pipeline (and a host's own code) can emit events through EventsService.
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();

/** `@InjectDeliveryOptions() options: DeliveryModuleOptions`: what forRoot / forRootAsync was given. */
export const InjectDeliveryOptions = (): ParameterDecorator & PropertyDecorator => Inject(DELIVERY_OPTIONS);

export interface ResolvedDeliveryOptions {
  worker: boolean;
  timeoutMs: number;
  leaseMs: number;
  concurrency: number;
  batchSize: number;
  pollIntervalMs: number;
}

export function resolveDeliveryOptions(o: DeliveryModuleOptions): ResolvedDeliveryOptions {
  const r = {
    worker: o.worker ?? true,
    timeoutMs: o.timeoutMs ?? 10_000,
    leaseMs: o.leaseMs ?? 60_000,
    concurrency: o.concurrency ?? 64,
    batchSize: o.batchSize ?? 64,
    pollIntervalMs: o.pollIntervalMs ?? 1000,
  };
  // A lease shorter than an attempt would let a second worker send while the first still waits.
  if (r.leaseMs <= r.timeoutMs) throw new Error(`delivery lease (${r.leaseMs} ms) must be longer than the attempt timeout (${r.timeoutMs} ms)`);
  return r;
}
