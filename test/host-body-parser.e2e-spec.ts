import { ArgumentsHost, Body, Catch, Controller, DynamicModule, ExceptionFilter, HttpException, INestApplication, Module, Post } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { TypeOrmModule } from '@nestjs/typeorm';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ApiKeyService,
  ApiKeysModule,
  AuthModule,
  CryptoModule,
  DeliveryModule,
  generateEncryptionKey,
  PaginationModule,
  POSTGRES_MIGRATIONS,
  SQLITE_MIGRATIONS,
  SsrfModule,
  StaticDnsResolver,
  TRENDHOOKS_ENTITIES,
  WebhooksModule,
  type DatabaseConfig,
  TrendhooksModule,
} from '../src/index';
import { MAX_JSON_DEPTH, OWN_BODY_TYPE } from '../src/common/json-body.middleware';
import { testDatabases, TestDatabase } from './support/databases';

/**
 * trendhooks' routes inside a host app that keeps Nest's body parser ON (Nest's default), on
 * express and fastify: every bad body gets the answer it gets with the parser off, and the host's
 * own routes keep the host's parser and errors (compared with the same host without trendhooks).
 */

// 'express, testing module': the same express host built from a compiled testing module, whose
// providers are built before createNestApplication() makes the HTTP adapter.
type AdapterName = 'express' | 'express, testing module' | 'fastify';

/** One key for every app on the database (they share its rows). */
const KEY = generateEncryptionKey();

/** The host's error format: nothing like trendhooks' envelope. */
@Catch()
class HostFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const status = exception instanceof HttpException ? exception.getStatus() : ((exception as { statusCode?: number }).statusCode ?? 500);
    const res = host.switchToHttp().getResponse();
    const body = { ok: false, status, reason: exception instanceof Error ? exception.message : 'oops' };
    if (typeof res.status === 'function' && typeof res.json === 'function') res.status(status).json(body);
    else res.code(status).send(body);
  }
}

@Controller('host')
class HostBodyController {
  /** The host's own JSON route: parsed by the host's parser (Nest's). */
  @Post('echo')
  echo(@Body() body: unknown) {
    return { got: body === undefined ? 'nothing' : body };
  }
}

function typeOrmOptions(db: DatabaseConfig) {
  const common = { entities: [...TRENDHOOKS_ENTITIES], migrationsRun: true, migrationsTableName: 'host_migrations', synchronize: false, logging: false };
  return db.type === 'postgres'
    ? { type: 'postgres' as const, url: db.url, migrations: POSTGRES_MIGRATIONS, ...common }
    : { type: 'better-sqlite3' as const, database: db.path, migrations: SQLITE_MIGRATIONS, ...common };
}

@Module({})
class BodyHostModule {
  /** With `db`: the host with trendhooks' modules; without: the same host alone (the baseline). */
  static forRoot(db?: DatabaseConfig): DynamicModule {
    return {
      module: BodyHostModule,
      imports: db
        ? [
            TypeOrmModule.forRoot(typeOrmOptions(db)),
            TrendhooksModule.forRoot(),
            ApiKeysModule,
            AuthModule.forRoot({}),
            CryptoModule.forRoot({ keys: [KEY] }),
            PaginationModule.forRoot({ secrets: ['host-body-cursor-secret-0123456789abcdefghijkl'] }),
            SsrfModule.forRoot({ resolver: new StaticDnsResolver({ 'hooks.example.com': ['93.184.216.34'] }) }),
            DeliveryModule.forRoot({ worker: false }),
            WebhooksModule,
          ]
        : [],
      controllers: [HostBodyController],
      providers: [{ provide: APP_FILTER, useClass: HostFilter }],
    };
  }
}

async function start(adapter: AdapterName, bodyParser: boolean, db?: DatabaseConfig): Promise<{ app: INestApplication; url: string }> {
  const options = { bodyParser, logger: false as const, abortOnError: false };
  const app =
    adapter === 'fastify'
      ? await NestFactory.create(BodyHostModule.forRoot(db), new FastifyAdapter(), options)
      : adapter === 'express, testing module'
        ? (await Test.createTestingModule({ imports: [BodyHostModule.forRoot(db)] }).compile()).createNestApplication(options)
        : await NestFactory.create(BodyHostModule.forRoot(db), options);
  await app.listen(0, '127.0.0.1');
  return { app, url: `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}` };
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** One POST over a real connection; `chunked` leaves Content-Length out (Transfer-Encoding: chunked). */
function post(base: string, path: string, headers: Record<string, string>, body: string | Buffer, chunked = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method: 'POST', headers: chunked ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* not JSON: compared as text */
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
      });
    });
    req.on('error', reject);
    if (chunked) {
      // Several chunks, none announcing the total.
      const buf = Buffer.from(body);
      for (let i = 0; i < buf.length; i += 16 * 1024) req.write(buf.subarray(i, i + 16 * 1024));
      req.end();
    } else req.end(body);
  });
}

const JSON_TYPE = { 'content-type': 'application/json' };
const webhook = (extra: Record<string, unknown> = {}) => JSON.stringify({ url: 'https://hooks.example.com/h', event: 'trends.surge', subreddit: 'typescript', ...extra });
const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

/** The bad bodies, each with the answer trendhooks gives with the parser off. */
const BAD_BODIES: { name: string; headers: Record<string, string>; body: string; chunked?: boolean; status: number; code: string }[] = [
  { name: 'malformed JSON', headers: JSON_TYPE, body: '{"url":', status: 400, code: 'INVALID_JSON' },
  { name: 'an empty (blank) body', headers: JSON_TYPE, body: '   ', status: 400, code: 'INVALID_JSON' },
  { name: 'text/plain', headers: { 'content-type': 'text/plain' }, body: 'url=x', status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
  { name: 'a form', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'url=https%3A%2F%2Fhooks.example.com%2Fh', status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
  { name: 'no Content-Type', headers: {}, body: webhook(), status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
  { name: 'a 70 KiB body (under express’s 100 kb default)', headers: JSON_TYPE, body: webhook({ pad: 'x'.repeat(70 * 1024) }), status: 413, code: 'PAYLOAD_TOO_LARGE' },
  { name: 'a 70 KiB chunked body (no Content-Length)', headers: JSON_TYPE, body: webhook({ pad: 'x'.repeat(70 * 1024) }), chunked: true, status: 413, code: 'PAYLOAD_TOO_LARGE' },
  { name: 'a 200 KiB body (over express’s 100 kb default)', headers: JSON_TYPE, body: webhook({ pad: 'x'.repeat(200 * 1024) }), status: 413, code: 'PAYLOAD_TOO_LARGE' },
  { name: `nesting deeper than ${MAX_JSON_DEPTH}`, headers: JSON_TYPE, body: webhook({ deep: JSON.parse(nested(MAX_JSON_DEPTH)) }), status: 400, code: 'VALIDATION_ERROR' },
];

/** What must be identical with the parser on and off: status, code, message, envelope keys, request id echoed, rate-limit headers present. */
function shape(a: Answer) {
  expect(a.body?.error?.request_id).toBeTruthy();
  expect(a.body.error.request_id).toBe(a.headers['x-request-id']);
  return { status: a.status, keys: Object.keys(a.body), code: a.body.error.code, message: a.body.error.message, rateLimited: a.headers['x-ratelimit-limit'] !== undefined };
}

describe.each(testDatabases())('trendhooks’ bodies inside a host app with its body parser on, on %s', (_name, makeDb) => {
  let db: TestDatabase;
  let database: DatabaseConfig;
  beforeAll(async () => {
    db = makeDb();
    database = await db.create();
  });
  afterAll(() => db?.drop());

  describe.each<AdapterName>(['express', 'express, testing module', 'fastify'])('%s', (adapter) => {
    let on: { app: INestApplication; url: string };
    let off: { app: INestApplication; url: string };
    let baseline: { app: INestApplication; url: string };
    let auth: Record<string, string>;

    beforeAll(async () => {
      on = await start(adapter, true, database);
      off = await start(adapter, false, database);
      baseline = await start(adapter, true);
      auth = { authorization: `Bearer ${(await on.app.get(ApiKeyService).issue(`body-host-${adapter}-${process.pid}`, 'business')).key}` };
    });
    afterAll(async () => {
      await Promise.all([on?.app.close(), off?.app.close(), baseline?.app.close()]);
    });

    it.each(BAD_BODIES)('$name: answers $status $code in our envelope, exactly as with the parser off', async ({ headers, body, chunked, status, code }) => {
      const withParser = await post(on.url, '/v1/webhooks', { ...auth, ...headers }, body, chunked);
      const without = await post(off.url, '/v1/webhooks', { ...auth, ...headers }, body, chunked);
      expect(shape(withParser)).toEqual({ status, keys: ['error'], code, message: expect.any(String), rateLimited: true });
      expect(shape(withParser)).toEqual(shape(without));
    });

    it('still checks the key first: a malformed body without a key is 401, as with the parser off', async () => {
      const withParser = await post(on.url, '/v1/webhooks', JSON_TYPE, '{"url":');
      expect(shape(withParser)).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
      expect(shape(withParser)).toEqual(shape(await post(off.url, '/v1/webhooks', JSON_TYPE, '{"url":')));
    });

    it('takes a good body with the parser on, and the nesting limit itself', async () => {
      const created = await post(on.url, '/v1/webhooks', { ...auth, ...JSON_TYPE }, webhook());
      expect(created.status).toBe(201);
      expect(created.body.data.secret).toMatch(/^whsec_/);
      // Exactly MAX_JSON_DEPTH levels (the outer object is one): refused for the unknown field only.
      const atLimit = await post(on.url, '/v1/webhooks', { ...auth, ...JSON_TYPE }, webhook({ deep: JSON.parse(nested(MAX_JSON_DEPTH - 1)) }));
      expect(shape(atLimit)).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', message: expect.stringContaining('deep') });
    });

    it('leaves the host’s own routes to the host’s parser and errors (as the same host without trendhooks)', async () => {
      const cases: [Record<string, string>, string][] = [
        [JSON_TYPE, '{"a":1}'],
        [JSON_TYPE, '{"a":'],
        [JSON_TYPE, JSON.stringify({ pad: 'x'.repeat(70 * 1024) })],
        [JSON_TYPE, JSON.stringify({ pad: 'x'.repeat(200 * 1024) })],
        [JSON_TYPE, nested(40)],
        [{ 'content-type': 'text/plain' }, 'hello'],
        [{ 'content-type': 'application/x-www-form-urlencoded' }, 'a=1&b=2'],
        [{ 'content-type': OWN_BODY_TYPE }, '{"a":1}'],
      ];
      for (const [headers, body] of cases) {
        const host = await post(on.url, '/host/echo', headers, body);
        const alone = await post(baseline.url, '/host/echo', headers, body);
        expect({ headers, status: host.status, body: host.body }).toEqual({ headers, status: alone.status, body: alone.body });
        expect(host.headers['x-request-id']).toBeUndefined();
      }
      // The parser is really the host's: it parsed the JSON for the host's route.
      expect((await post(on.url, '/host/echo', JSON_TYPE, '{"a":1}')).body).toEqual({ got: { a: 1 } });
    });
  });
});
