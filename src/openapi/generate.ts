import { NestFactory } from '@nestjs/core';
import { OpenAPIObject } from '@nestjs/swagger';
import { AppModule } from '../app.module';
import { loadConfig } from '../config/config';
import { buildOpenApiDocument } from './document';

/**
 * The standalone app's OpenAPI document without serving or connecting anything: `preview` mode
 * scans the modules but instantiates no provider, so no database is opened. The configuration is
 * the defaults (not the environment), so the output depends on the code alone.
 */
export async function generateOpenApiDocument(): Promise<OpenAPIObject> {
  const app = await NestFactory.create(AppModule.forRoot(loadConfig({ DATABASE_URL: 'sqlite::memory:' })), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  try {
    return buildOpenApiDocument(app);
  } finally {
    await app.close();
  }
}
