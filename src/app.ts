import { INestApplication, INestApplicationContext, LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { AppModule, AppModuleOverrides, Role } from './app.module';
import type { AppConfig } from './config/config';
import { dataSourceOptions, runMigrations } from './database/data-source';

export interface CreateAppOptions extends AppModuleOverrides {
  logger?: LoggerService | LogLevel[] | false;
}

/** Applies pending migrations on a short-lived connection, before any module (the worker) starts. */
export async function migrateDatabase(config: AppConfig): Promise<string[]> {
  const ds = new DataSource(dataSourceOptions(config.database));
  await ds.initialize();
  try {
    return await runMigrations(ds);
  } finally {
    await ds.destroy();
  }
}

/** Builds the standalone app (used by `serve`, `npm start` and the e2e suites alike) and migrates its database. */
export async function createApp(config: AppConfig, options: CreateAppOptions = {}): Promise<INestApplication> {
  await migrateDatabase(config);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, options), {
    // Bodies are read by the modules that accept them (JsonBodyMiddleware: JSON only, 64 KiB).
    bodyParser: false,
    logger: options.logger ?? ['error', 'warn', 'log'],
    abortOnError: false,
  });
  app.disable('x-powered-by');
  app.enableShutdownHooks();
  return app;
}

/**
 * `npm start` / `trendhooks serve [--role]`: roles with the API listen on HOST:PORT; a worker-only
 * process runs without an HTTP listener.
 */
export async function serve(config: AppConfig, role: Role = 'all'): Promise<INestApplicationContext> {
  const where = config.database.type === 'sqlite' ? `SQLite ${config.database.path}` : 'PostgreSQL';
  if (role === 'worker' || role === 'pipeline') {
    await migrateDatabase(config);
    // createApplicationContext starts the worker at once, so migrations ran just before.
    const ctx = await NestFactory.createApplicationContext(AppModule.forRoot(config, { role }), { logger: ['error', 'warn', 'log'] });
    ctx.enableShutdownHooks();
    console.log(`trendhooks ${role} running (${where})`);
    return ctx;
  }
  const app = await createApp(config, { role });
  await app.listen(config.http.port, config.http.host);
  console.log(`trendhooks ${role} listening on http://${config.http.host}:${config.http.port} (${where})`);
  return app;
}
