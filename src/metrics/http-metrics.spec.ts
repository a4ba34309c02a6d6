import { Controller, Get, INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { UNMATCHED_ROUTE } from './http-metrics';
import { MetricsModule } from './metrics.module';
import { Metrics } from './metrics.service';

@Controller('things')
class ThingsController {
  @Get(':id')
  one(): { ok: true } {
    return { ok: true };
  }
}

@Module({ imports: [MetricsModule.forRoot({ defaultMetrics: false })], controllers: [ThingsController] })
class HostModule {}

const count = (text: string, route: string, status: number): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`http_request_duration_seconds_count{method="GET",route="${route}",status="${status}"}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

/** A host app times its requests, however it builds the app (the recorder is mounted differently on each path). */
describe('HTTP metrics of a host app', () => {
  const builds: [string, () => Promise<INestApplication>][] = [
    ['NestFactory.create, express', () => NestFactory.create(HostModule, { logger: false })],
    // Providers are built by compile(), before createNestApplication() makes the HTTP adapter.
    ['a compiled testing module, express', async () => (await Test.createTestingModule({ imports: [HostModule] }).compile()).createNestApplication({ logger: false })],
    ['NestFactory.create, fastify', () => NestFactory.create(HostModule, new FastifyAdapter(), { logger: false })],
  ];

  it.each(builds)('%s: each request under its route pattern, 404s as unmatched', async (_name, build) => {
    const app = await build();
    try {
      await app.init();
      if (app.getHttpAdapter().getType() === 'fastify') await app.getHttpAdapter().getInstance().ready();
      await request(app.getHttpServer()).get('/things/1').expect(200);
      await request(app.getHttpServer()).get('/things/2').expect(200);
      await request(app.getHttpServer()).get('/nowhere').expect(404);
      const text = await app.get(Metrics).registry.metrics();
      expect(count(text, '/things/:id', 200)).toBe(2);
      expect(count(text, UNMATCHED_ROUTE, 404)).toBe(1);
    } finally {
      await app.close();
    }
  });
});
