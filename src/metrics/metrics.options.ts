import { ConfigurableModuleBuilder, Inject } from '@nestjs/common';

export interface MetricsModuleOptions {
  /** prom-client's process metrics (CPU, memory, event loop lag, GC). Default true. */
  defaultMetrics?: boolean;
}

export const { ConfigurableModuleClass: MetricsConfigurableModule, MODULE_OPTIONS_TOKEN: METRICS_OPTIONS } =
  new ConfigurableModuleBuilder<MetricsModuleOptions>()
    .setClassMethodName('forRoot')
    // Global so the worker, the events service and the poller can inject Metrics without importing it.
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();

/** `@InjectMetricsOptions() options: MetricsModuleOptions`: what forRoot / forRootAsync was given. */
export const InjectMetricsOptions = (): ParameterDecorator & PropertyDecorator => Inject(METRICS_OPTIONS);
