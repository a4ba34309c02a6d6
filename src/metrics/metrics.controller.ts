import { Controller, Get, Header, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Registry } from 'prom-client';
import { ApiExceptionFilter } from '../common/exception.filter';
import { Metrics } from './metrics.service';

/** Prometheus exposition, outside `/v1` and the JSON API (hence not in the OpenAPI document). */
@Controller()
@UseFilters(ApiExceptionFilter)
@ApiExcludeController()
export class MetricsController {
  constructor(private readonly metrics: Metrics) {}

  @Get('metrics')
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  @Header('Cache-Control', 'no-store')
  scrape(): Promise<string> {
    return this.metrics.scrape();
  }
}
