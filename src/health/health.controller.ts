import { Controller, Get, HttpCode, Inject, Logger, UseFilters } from '@nestjs/common';
import { ApiOperation, ApiTags } from '../openapi/swagger';
import { DataSource } from 'typeorm';
import { AppError } from '../common/errors';
import { InjectTrendhooksDataSource } from '../database/data-source.token';
import { ApiExceptionFilter } from '../common/exception.filter';
import { ApiErrorResponses, ApiNoAuth, ApiPlainResponse } from '../openapi/decorators';
import { HEALTH_OPTIONS, HealthModuleOptions } from './health.options';

const HEALTH_OK = { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } };

/**
 * Liveness and readiness, outside `/v1`, unauthenticated and not rate limited. A ping with a
 * timeout each, run together: written here rather than through @nestjs/terminus, whose module
 * loads its whole set of indicators (disk, memory, HTTP, every ORM) into every process.
 */
@Controller()
@UseFilters(ApiExceptionFilter)
@ApiTags('Health')
@ApiNoAuth()
export class HealthController {
  private readonly logger = new Logger('Health');
  private readonly timeoutMs: number;

  constructor(
    @Inject(HEALTH_OPTIONS) private readonly options: HealthModuleOptions,
    @InjectTrendhooksDataSource() private readonly ds: DataSource,
  ) {
    this.timeoutMs = options.timeoutMs ?? 2000;
  }

  @Get('healthz')
  @HttpCode(200)
  @ApiOperation({ operationId: 'healthz', summary: 'Liveness', description: 'Answers 200 once the process serves.' })
  @ApiPlainResponse(200, 'Alive.', HEALTH_OK, { v1: false })
  healthz() {
    // Liveness checks nothing outside the process: a database outage must not get it restarted.
    return { status: 'ok' };
  }

  @Get('readyz')
  @ApiOperation({ operationId: 'readyz', summary: 'Readiness', description: 'Answers 200 only while the database is reachable.' })
  @ApiPlainResponse(200, 'Ready.', { ...HEALTH_OK, properties: { ...HEALTH_OK.properties, checks: { type: 'object', additionalProperties: { type: 'string' } } } }, { v1: false })
  @ApiErrorResponses({ 503: '`SERVICE_UNAVAILABLE`: the database is unreachable.' }, { v1: false })
  async readyz() {
    const pings: [string, () => Promise<unknown>][] = [['database', () => this.ds.query('SELECT 1')], ...Object.entries(this.options.pings ?? {})];
    const failures = await Promise.all(pings.map(([, ping]) => this.failure(ping)));
    const down = pings.map(([name], i) => [name, failures[i]]).filter(([, failure]) => failure !== null);
    if (down.length > 0) {
      // Names only in the answer: the checks' own messages (driver errors) go to the log, out of an unauthenticated answer.
      this.logger.error(`Readiness check failed: ${down.map(([name, failure]) => `${name}: ${failure}`).join('; ')}`);
      throw new AppError('SERVICE_UNAVAILABLE', `not ready: ${down.map(([name]) => name).join(', ')} unreachable`);
    }
    return { status: 'ok', checks: Object.fromEntries(pings.map(([name]) => [name, 'up'])) };
  }

  /** Null when `ping` resolves within the timeout, else why not. */
  private async failure(ping: () => Promise<unknown>): Promise<string | null> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`timeout of ${this.timeoutMs} ms exceeded`)), this.timeoutMs)));
      await Promise.race([ping(), timeout]);
      return null;
    } catch (err) {
      return (err as Error).message;
    } finally {
      clearTimeout(timer);
    }
  }
}
