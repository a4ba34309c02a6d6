import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { HostModule } from './host.module';

export async function bootstrap(port = Number(process.env.PORT ?? 3000)) {
  const app = await NestFactory.create(
    HostModule.forRoot({
      database: process.env.DATABASE_URL ?? 'data/host.db',
      encryptionKeys: process.env.ENCRYPTION_KEYS ?? '',
      cursorSecret: process.env.CURSOR_SECRET ?? '',
      allowDestinations: process.env.SSRF_ALLOW_DESTINATIONS,
    }),
    // trendhooks reads its own request bodies (JSON only, 64 KiB, its own 400/413/415 answers):
    // turn off Nest's body parser and parse bodies for your own routes in your own middleware.
    { bodyParser: false },
  );
  await app.listen(port);
  return app;
}

if (require.main === module) void bootstrap();
