import { Controller, Get, HttpCode, Inject, ServiceUnavailableException, UseFilters } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheckResult, HealthCheckService, HealthIndicatorFunction, HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { AppError } from '../common/errors';
import { InjectTrendhooksDataSource } from '../database/data-source.token';
import { ApiExceptionFilter } from '../common/exception.filter';
import { ApiErrorResponses, ApiNoAuth, ApiPlainResponse } from '../openapi/decorators';
import { HEALTH_OPTIONS, HealthModuleOptions } from './health.options';

const HEALTH_OK = { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } };

/** Liveness and readiness, outside `/v1`, unauthenticated and not rate limited. */
@Controller()
@UseFilters(ApiExceptionFilter)
@ApiTags('Health')
@ApiNoAuth()
export class HealthController {
  private readonly timeoutMs: number;

  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    @Inject(HEALTH_OPTIONS) private readonly options: HealthModuleOptions,
    @InjectTrendhooksDataSource() private readonly ds: DataSource,
  ) {
    this.timeoutMs = options.timeoutMs ?? 2000;
  }

  @Get('healthz')
  @HttpCode(200)
  @ApiOperation({ operationId: 'healthz', summary: 'Liveness', description: 'Answers 200 once the process serves.' })
  @ApiPlainResponse(200, 'Alive.', HEALTH_OK, { v1: false })
  async healthz() {
    // Liveness checks nothing outside the process: a database outage must not get it restarted.
    const result = await this.health.check([]);
    return { status: result.status };
  }

  @Get('readyz')
  @ApiOperation({ operationId: 'readyz', summary: 'Readiness', description: 'Answers 200 only while the database is reachable.' })
  @ApiPlainResponse(200, 'Ready.', { ...HEALTH_OK, properties: { ...HEALTH_OK.properties, checks: { type: 'object', additionalProperties: { type: 'string' } } } }, { v1: false })
  @ApiErrorResponses({ 503: '`SERVICE_UNAVAILABLE`: the database is unreachable.' }, { v1: false })
  async readyz() {
    const checks: HealthIndicatorFunction[] = [() => this.db.pingCheck('database', { timeout: this.timeoutMs, connection: this.ds })];
    for (const [name, ping] of Object.entries(this.options.pings ?? {})) checks.push(() => this.pingCheck(name, ping));
    let result: HealthCheckResult;
    try {
      result = await this.health.check(checks);
    } catch (err) {
      if (!(err instanceof ServiceUnavailableException)) throw err;
      // Names only: the checks' own messages (driver errors) stay in the log, out of an unauthenticated answer.
      const details = (err.getResponse() as HealthCheckResult).details;
      const down = Object.keys(details).filter((k) => details[k].status !== 'up');
      throw new AppError('SERVICE_UNAVAILABLE', `not ready: ${down.join(', ')} unreachable`);
    }
    return { status: 'ok', checks: Object.fromEntries(Object.entries(result.details).map(([k, v]) => [k, v.status])) };
  }

  private async pingCheck(name: string, ping: () => Promise<unknown>) {
    const check = this.indicators.check(name);
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`timeout of ${this.timeoutMs} ms exceeded`)), this.timeoutMs)));
      await Promise.race([ping(), timeout]);
      return check.up();
    } catch (err) {
      return check.down((err as Error).message);
    } finally {
      clearTimeout(timer);
    }
  }
}
