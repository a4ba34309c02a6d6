import { Controller, Get, HttpCode, UseFilters } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppError } from '../common/errors';
import { ApiExceptionFilter } from '../common/exception.filter';

/** Liveness and readiness, outside `/v1`, unauthenticated and not rate limited. */
@Controller()
@UseFilters(ApiExceptionFilter)
export class HealthController {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  @Get('healthz')
  @HttpCode(200)
  healthz() {
    return { status: 'ok' };
  }

  @Get('readyz')
  async readyz() {
    try {
      await this.ds.query('SELECT 1');
    } catch {
      throw new AppError('SERVICE_UNAVAILABLE', 'database is unreachable');
    }
    return { status: 'ok', checks: { database: 'ok' } };
  }
}
