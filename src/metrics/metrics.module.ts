import { Module } from '@nestjs/common';
import { expressHttpMetricsProvider, FastifyHttpMetrics } from './http-metrics';
import { MetricsConfigurableModule } from './metrics.options';
import { Metrics } from './metrics.service';

/**
 * The injectable `Metrics` every module records into. Global by default; `MetricsModule.forRoot({})`.
 * Times every HTTP request of the app (route pattern, never the raw URL). It adds no route: the
 * series are served on a listener of their own (`startMetricsServer`; the standalone app's
 * METRICS_PORT), never on the API's.
 */
@Module({
  providers: [Metrics, expressHttpMetricsProvider, FastifyHttpMetrics],
  exports: [Metrics],
})
export class MetricsModule extends MetricsConfigurableModule {}
