import { INestApplication, LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppModule, AppModuleOverrides } from './app.module';
import type { AppConfig } from './config/config';
import { runMigrations } from './database/data-source';

export interface CreateAppOptions extends AppModuleOverrides {
  logger?: LoggerService | LogLevel[] | false;
}

/** Builds the standalone app (used by `serve`, `npm start` and the e2e suites alike) and migrates its database. */
export async function createApp(config: AppConfig, options: CreateAppOptions = {}): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, options), {
    // Bodies are read by the modules that accept them (JsonBodyMiddleware: JSON only, 64 KiB).
    bodyParser: false,
    logger: options.logger ?? ['error', 'warn', 'log'],
    abortOnError: false,
  });
  app.disable('x-powered-by');
  app.enableShutdownHooks();
  await runMigrations(app.get<DataSource>(getDataSourceToken()));
  return app;
}

/** `npm start` / `trendhooks serve`: the API on HOST:PORT. */
export async function serve(config: AppConfig): Promise<INestApplication> {
  const app = await createApp(config);
  await app.listen(config.http.port, config.http.host);
  const where = config.database.type === 'sqlite' ? `SQLite ${config.database.path}` : 'PostgreSQL';
  console.log(`trendhooks listening on http://${config.http.host}:${config.http.port} (${where})`);
  return app;
}
