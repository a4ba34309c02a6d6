import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { FastifyHttpMetrics, HttpMetricsMiddleware } from './http-metrics';
import { MetricsController } from './metrics.controller';
import { MetricsConfigurableModule } from './metrics.options';
import { Metrics } from './metrics.service';

/**
 * `GET /metrics` (Prometheus text) and the injectable `Metrics` every module records into. Global
 * by default; `MetricsModule.forRoot({})`. Times every HTTP request of the app (route pattern, never the raw URL).
 */
@Module({
  controllers: [MetricsController],
  providers: [Metrics, HttpMetricsMiddleware, FastifyHttpMetrics],
  exports: [Metrics],
})
export class MetricsModule extends MetricsConfigurableModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(HttpMetricsMiddleware).forRoutes('*path');
  }
}
