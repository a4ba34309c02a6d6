import { Inject, MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { ExpressAppLayerState } from '../common/express-app-layer';
import { EXPRESS_HTTP_METRICS, expressHttpMetricsProvider, expressRecorder, FastifyHttpMetrics } from './http-metrics';
import { MetricsConfigurableModule } from './metrics.options';
import { Metrics } from './metrics.service';

/**
 * The injectable `Metrics` every module records into when the host registers it (global: see
 * metrics.options.ts); `MetricsModule.forRoot({})`.
 * Times every HTTP request of the app (route pattern, never the raw URL). It adds no route: the
 * series are served on a listener of their own (`startMetricsServer`; the standalone app's
 * METRICS_PORT), never on the API's.
 */
@Module({
  providers: [Metrics, expressHttpMetricsProvider, FastifyHttpMetrics],
  exports: [Metrics],
})
export class MetricsModule extends MetricsConfigurableModule implements NestModule {
  constructor(
    private readonly metrics: Metrics,
    @Inject(EXPRESS_HTTP_METRICS) private readonly onExpress: ExpressAppLayerState,
    private readonly adapterHost: HttpAdapterHost,
  ) {
    super();
  }

  /** Express without the recorder on the app already (no adapter yet when it was built): a Nest middleware on every route. */
  configure(consumer: MiddlewareConsumer): void {
    if (this.onExpress.mounted() || this.adapterHost.httpAdapter?.getType() !== 'express') return;
    consumer.apply(expressRecorder(this.metrics)).forRoutes('*path');
  }
}
