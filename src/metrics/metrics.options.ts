import { ConfigurableModuleBuilder, Inject } from '@nestjs/common';

export interface MetricsModuleOptions {
  /** prom-client's process metrics (CPU, memory, event loop lag, GC). Default true. */
  defaultMetrics?: boolean;
}

export const { ConfigurableModuleClass: MetricsConfigurableModule, MODULE_OPTIONS_TOKEN: METRICS_OPTIONS } =
  new ConfigurableModuleBuilder<MetricsModuleOptions>()
    .setClassMethodName('forRoot')
    // Global, the one justified exception besides TrendhooksModule: Metrics is an optional sink the
    // worker, the events service and the poller record into (@Optional) when the host registers it.
    // They cannot import it: importing would switch HTTP metrics on in every host that never asked.
    .setExtras({}, (definition) => ({ ...definition, global: true }))
    .build();

/** `@InjectMetricsOptions() options: MetricsModuleOptions`: what forRoot / forRootAsync was given. */
export const InjectMetricsOptions = (): ParameterDecorator & PropertyDecorator => Inject(METRICS_OPTIONS);
