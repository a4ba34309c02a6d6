import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { HostModule } from './host.module.js';

export async function bootstrap(port = Number(process.env.PORT ?? 3000)) {
  // Nest's body parser stays on for your routes; trendhooks' routes read their own bodies (JSON only, 64 KiB, answers in its envelope).
  const app = await NestFactory.create(
    HostModule.forRoot({
      database: process.env.DATABASE_URL ?? 'data/host.db',
      encryptionKeys: process.env.ENCRYPTION_KEYS ?? '',
      cursorSecret: process.env.CURSOR_SECRET ?? '',
      allowDestinations: process.env.SSRF_ALLOW_DESTINATIONS,
    }),
  );
  await app.listen(port);
  return app;
}

void bootstrap();
