import { DynamicModule, MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from './auth/auth.module';
import { ApiExceptionFilter } from './common/exception.filter';
import { RequestIdMiddleware } from './common/request-id.middleware';
import type { AppConfig } from './config/config';
import { APP_CONFIG } from './config/config.module';
import { dataSourceOptions } from './database/data-source';
import { DeliveryModule } from './delivery/delivery.module';
import { HealthController } from './health/health.controller';
import { PaginationModule } from './pagination/pagination.module';
import { PostsModule } from './posts/posts.module';
import { SsrfModule } from './ssrf/ssrf.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import type { DnsResolver } from './ssrf/resolver';

export type Role = 'all' | 'api' | 'worker' | 'pipeline';
export const ROLES: readonly Role[] = ['all', 'api', 'worker', 'pipeline'];

export interface AppModuleOverrides {
  /** Which parts run in this process (`trendhooks serve --role`); default all. */
  role?: Role;
  /** Tests replace DNS with a fixed table. */
  resolver?: DnsResolver;
  /** Tests fix the retry jitter. */
  random?: () => number;
}

/** The standalone service: the only place that wires things globally (error filter, request ids). */
@Module({})
export class AppModule implements NestModule {
  static forRoot(config: AppConfig, overrides: AppModuleOverrides = {}): DynamicModule {
    const role = overrides.role ?? 'all';
    return {
      module: AppModule,
      imports: [
        TypeOrmModule.forRoot(dataSourceOptions(config.database)),
        AuthModule.forRoot({ plans: config.plans }),
        PaginationModule.forRoot({ secrets: config.cursor.secrets, ttlSeconds: config.cursor.ttlSeconds }),
        SsrfModule.forRoot({
          allowCidrs: config.ssrf.allowCidrs,
          denyCidrs: config.ssrf.denyCidrs,
          dnsTimeoutMs: config.ssrf.dnsTimeoutMs,
          resolver: overrides.resolver,
        }),
        WebhooksModule,
        PostsModule,
        ScheduleModule.forRoot(),
        DeliveryModule.forRoot({
          worker: role === 'all' || role === 'worker',
          ca: config.delivery.caPem ?? undefined,
          timeoutMs: config.delivery.timeoutMs,
          leaseMs: config.delivery.leaseMs,
          concurrency: config.delivery.concurrency,
          batchSize: config.delivery.batchSize,
          pollIntervalMs: config.delivery.pollIntervalMs,
          retryScheduleSeconds: config.delivery.retrySchedule ?? undefined,
          random: overrides.random,
        }),
      ],
      controllers: [HealthController],
      providers: [{ provide: APP_CONFIG, useValue: config }, { provide: APP_FILTER, useClass: ApiExceptionFilter }],
      exports: [APP_CONFIG],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RequestIdMiddleware).forRoutes('*path');
  }
}
