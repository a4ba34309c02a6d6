'use strict';
/**
 * A host app in plain JavaScript, on the package's built root entry (dist/index.js) as a host gets
 * it: SQLite, express (Nest's default adapter), every trendhooks module that takes no Redis, no
 * PostgreSQL, no fastify and no OpenAPI document. test/optional-packages.e2e-spec.ts runs it with
 * test/support/without-packages.js hiding those packages.
 *
 *   node --require test/support/without-packages.js test/support/light-host.js <sqlite file>
 *
 * Prints one JSON line: the statuses of a few requests, the hidden packages anything required,
 * and the files of the process that come from those packages (both must be empty).
 */
require('reflect-metadata');
const path = require('node:path');
const { NestFactory } = require('@nestjs/core');
const { TypeOrmModule } = require('@nestjs/typeorm');
const th = require('../../dist/index.js');

const FEATURES = { apiKeys: true, settings: true, posts: true };

class LightHostModule {}

async function main() {
  const file = process.argv[2];
  const host = {
    module: LightHostModule,
    imports: [
      TypeOrmModule.forRoot({
        name: 'host',
        type: 'better-sqlite3',
        database: file,
        entities: th.trendhooksEntities(FEATURES),
        migrations: th.trendhooksMigrations('sqlite', FEATURES),
        migrationsTableName: 'host_migrations',
        migrationsRun: true,
        logging: false,
      }),
      th.TrendhooksModule.forRoot({ dataSource: 'host' }),
      th.ApiKeysModule,
      th.AuthModule.forRoot({}),
      th.CryptoModule.forRoot({ keys: [th.generateEncryptionKey()] }),
      th.PaginationModule.forRoot({}),
      th.SsrfModule.forRoot({ resolver: new th.StaticDnsResolver({ 'hooks.example.com': ['93.184.216.34'] }) }),
      th.MetricsModule.forRoot({}),
      th.DeliveryModule.forRoot({ worker: true, pollIntervalMs: 100 }),
      th.WebhooksModule,
      th.PostsModule,
      th.TrendsModule.forRoot({}),
    ],
  };
  const app = await NestFactory.create(host, { logger: ['error'] });
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
  const { key } = await app.get(th.ApiKeyService).issue('light', 'business');
  const call = async (method, route, body) => {
    const res = await fetch(base + route, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return res.status;
  };
  const statuses = {
    createWebhook: await call('POST', '/v1/webhooks', { url: 'https://hooks.example.com/h', event: 'trends.surge', subreddit: 'typescript' }),
    listWebhooks: await call('GET', '/v1/webhooks'),
    listPosts: await call('GET', '/v1/subreddits/typescript/posts'),
  };
  // What a host merges into its own OpenAPI document: plain data, and no @nestjs/swagger needed to read it.
  const components = Object.keys({ ...th.TRENDHOOKS_OPENAPI_COMPONENTS });
  await app.close();

  const hidden = (process.env.WITHOUT_PACKAGES || '').split(',').filter(Boolean);
  const loaded = Object.keys(require.cache)
    .map((f) => path.relative(process.cwd(), f))
    .filter((f) => hidden.some((name) => f.includes(`node_modules/${name}/`)));
  process.stdout.write(JSON.stringify({ statuses, components, required: globalThis.__withoutPackagesRequired ?? null, loaded }) + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
