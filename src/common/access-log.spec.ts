import { Controller, Get, INestApplication, InternalServerErrorException, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { JsonLogger } from './json-logger';
import { EventEmitter } from 'node:events';
import pino from 'pino';
import { pinoHttp } from 'pino-http';
import request from 'supertest';
import { accessLogMiddleware } from './access-log';
import { isoTime, REDACTED_PATHS, structuredLogModules } from './logging';

const baseLogger = (lines: string[], redact = true) =>
  pino(
    {
      level: 'info',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      ...(redact ? { redact: { paths: REDACTED_PATHS, censor: '[redacted]' } } : {}),
    },
    { write: (s: string) => lines.push(s) },
  );

const QUIET = /^\/(healthz|readyz|metrics)(?:[?#]|$)/;
const CREDENTIAL_IN_URL = /(th_live_|whsec_)[^&#\s]*/g;

/** The pino-http set-up the standalone app used before the access-log middleware: the line to match. */
function pinoHttpBefore(lines: string[]) {
  return pinoHttp({
    logger: baseLogger(lines),
    genReqId: (req) => (req as { requestId?: string }).requestId ?? 'req_fixed0000000000000000000000000',
    quietReqLogger: true,
    customAttributeKeys: { reqId: 'request_id' },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    autoLogging: { ignore: (req) => QUIET.test(req.url ?? '') },
    serializers: {
      req: (req: { id: unknown; method: string; url: string; headers: unknown; remoteAddress?: string }) => ({
        id: req.id,
        method: req.method,
        url: String(req.url).replace(CREDENTIAL_IN_URL, '$1[redacted]'),
        headers: req.headers,
        remoteAddress: req.remoteAddress,
      }),
    },
  });
}

type Fake = EventEmitter & Record<string, unknown>;
function exchange(url: string, status: number, ended = true): { req: Fake; res: Fake } {
  const req = Object.assign(new EventEmitter(), {
    method: 'GET',
    url,
    requestId: 'req_fixed0000000000000000000000000',
    headers: { host: '127.0.0.1:8080', authorization: 'Bearer th_live_abcdefghijklmnop', cookie: 'c=1', 'user-agent': 'test' },
    socket: { remoteAddress: '127.0.0.1', remotePort: 5555 },
  }) as unknown as Fake;
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'set-cookie': 'secret=1' };
  const res = Object.assign(new EventEmitter(), {
    statusCode: status,
    headersSent: true,
    writableEnded: ended,
    setHeader: (k: string, v: string) => (headers[k.toLowerCase()] = v),
    getHeaders: () => ({ ...headers }),
  }) as unknown as Fake;
  return { req, res };
}

// The time and the duration differ between two writes; pid, hostname and everything else must not.
const normalise = (line: string) => JSON.parse(line.replace(/"time":"[^"]*"/, '"time":"T"').replace(/"responseTime":\d+/, '"responseTime":0'));

describe('accessLogMiddleware', () => {
  const cases: [string, string, number, 'finish' | 'close'][] = [
    ['a 200', '/v1/webhooks?limit=25', 200, 'finish'],
    ['a 4xx', '/v1/webhooks/nope', 404, 'finish'],
    ['a 5xx (request errored, level error, err)', '/v1/webhooks', 500, 'finish'],
    ['a credential in the URL', '/v1/webhooks?key=th_live_secretsecret&x=whsec_abc', 200, 'finish'],
  ];
  it.each(cases.flatMap(([name, ...rest]) => [[name, ...rest, false], [`${name}, censored by the middleware`, ...rest, true]] as [string, string, number, 'finish' | 'close', boolean][]))('writes the same line as pino-http did for %s', (_name, url, status, event, ownCensor) => {
    const before: string[] = [];
    const after: string[] = [];
    const a = exchange(url, status);
    pinoHttpBefore(before)(a.req as never, a.res as never, () => {});
    a.res.emit(event);
    const b = exchange(url, status);
    // ownCensor: the access lines go through a logger without redaction (as the app's do).
    const options = ownCensor ? { lineLogger: baseLogger(after, false) } : {};
    accessLogMiddleware(baseLogger(after), options)(b.req as never, b.res as never, () => {});
    b.res.emit(event);
    expect(after).toHaveLength(1);
    expect(before).toHaveLength(1);
    // Same keys in the same order, same values (the err stack aside, taken at a different place).
    const strip = (o: { err?: { stack?: string } }) => (o.err ? { ...o, err: { ...o.err, stack: 'S' } } : o);
    expect(JSON.stringify(strip(normalise(after[0])))).toBe(JSON.stringify(strip(normalise(before[0]))));
    expect(after[0]).not.toMatch(/th_live_[a-z]|whsec_[a-z]/);
    expect(after[0]).not.toContain('secret=1');
  });

  it('writes an aborted response as pino-http did, and nothing for a quiet path unless it fails', () => {
    const lines: string[] = [];
    const mw = accessLogMiddleware(baseLogger(lines), { ignore: (req) => QUIET.test(req.url ?? '') });
    const aborted = exchange('/v1/webhooks', 200, false);
    mw(aborted.req as never, aborted.res as never, () => {});
    aborted.res.emit('close');
    expect(JSON.parse(lines[0]).msg).toBe('request aborted');
    const probe = exchange('/healthz', 200);
    mw(probe.req as never, probe.res as never, () => {});
    probe.res.emit('finish');
    expect(lines).toHaveLength(1);
    const failing = exchange('/healthz', 200);
    mw(failing.req as never, failing.res as never, () => {});
    failing.res.emit('error', new Error('socket gone'));
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1])).toMatchObject({ level: 'error', msg: 'request errored', err: { message: 'socket gone' } });
  });

  it('gives the request a logger carrying its id, made only when something is logged', () => {
    const lines: string[] = [];
    const logger = baseLogger(lines);
    const child = jest.spyOn(logger, 'child');
    const { req, res } = exchange('/v1/webhooks', 200);
    accessLogMiddleware(logger)(req as never, res as never, () => {});
    res.emit('finish');
    expect(child).not.toHaveBeenCalled();
    (req.log as pino.Logger).warn({ n: 1 }, 'inside');
    (req.log as pino.Logger).info('again');
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines.slice(1).map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ level: 'warn', request_id: 'req_fixed0000000000000000000000000', n: 1, msg: 'inside' }),
      expect.objectContaining({ level: 'info', request_id: 'req_fixed0000000000000000000000000', msg: 'again' }),
    ]);
  });
});

@Controller('things')
class ThingsController {
  constructor(private readonly log: JsonLogger) {}

  @Get()
  list() {
    this.log.log('listing things');
    return [];
  }

  @Get('broken')
  broken() {
    throw new InternalServerErrorException();
  }
}

// The access log goes on the express app when the module is built, or, in an app built from a
// compiled testing module (no HTTP adapter yet when its providers are built), as a Nest middleware.
describe.each([
  ['NestFactory.create', (m: Type<unknown>) => NestFactory.create(m, { logger: false })],
  ['a compiled testing module', async (m: Type<unknown>) => (await Test.createTestingModule({ imports: [m] }).compile()).createNestApplication({ logger: false })],
])('structuredLogModules in a Nest app (express, %s)', (_name, build: (m: Type<unknown>) => Promise<INestApplication>) => {
  const lines: string[] = [];
  let app: INestApplication;

  beforeAll(async () => {
    @Module({ imports: [...structuredLogModules({ level: 'info', stream: { write: (s: string) => lines.push(s) } })], controllers: [ThingsController] })
    class TestModule {}
    app = await build(TestModule);
    await app.init();
  });
  afterAll(() => app.close());

  it('writes one access line per request and ties the logs written while serving it to its X-Request-Id', async () => {
    lines.length = 0;
    const res = await request(app.getHttpServer()).get('/things').set('Authorization', 'Bearer th_live_abcdefghijklmnop');
    const failed = await request(app.getHttpServer()).get('/things/broken');
    await new Promise((r) => setTimeout(r, 20));
    const records = lines.map((l) => JSON.parse(l));
    const id = res.headers['x-request-id'];
    expect(id).toMatch(/^req_[0-9a-f]{32}$/);
    expect(records.filter((r) => r.request_id === id).map((r) => r.msg)).toEqual(['listing things', 'request completed']);
    expect(records.find((r) => r.msg === 'request completed')).toMatchObject({ level: 'info', req: { id, method: 'GET', url: '/things', headers: { authorization: '[redacted]' } }, res: { statusCode: 200 } });
    expect(records.find((r) => r.request_id === failed.headers['x-request-id'] && r.req)).toMatchObject({ level: 'error', msg: 'request errored', res: { statusCode: 500 } });
  });

  it('censors credentials in non-standard headers: by the header name, or by a value that is one', async () => {
    lines.length = 0;
    const sent: Record<string, string> = {
      'X-Api-Key': 'k-0001-secret',
      'Api-Key': 'k-0002-secret',
      'X-Auth-Token': 'k-0003-secret',
      'X-Access-Token': 'k-0004-secret',
      'X-Amz-Security-Token': 'k-0005-secret',
      'X-CSRF-Token': 'k-0006-secret',
      'X-Session-Id': 'k-0007-secret',
      'Private-Key': 'k-0008-secret',
      Cookie: 'sid=k-0009-secret',
      'X-Forwarded-Authorization': 'k-0010-secret',
      'X-Upstream': 'Bearer k-0011-secret',
      'X-Note': 'th_live_k0012secret',
      'X-Hook': 'whsec_k0013secret',
    };
    const res = await request(app.getHttpServer()).get('/things').set(sent).set('User-Agent', 'probe/1.0').set('X-Trace', 'abc123');
    await new Promise((r) => setTimeout(r, 20));
    const line = lines.find((l) => JSON.parse(l).request_id === res.headers['x-request-id'] && JSON.parse(l).msg === 'request completed')!;
    expect(line).toBeDefined();
    expect(line).not.toMatch(/k-?00\d\d-?secret/);
    const headers = JSON.parse(line).req.headers as Record<string, string>;
    for (const name of Object.keys(sent)) expect([name, headers[name.toLowerCase()]]).toEqual([name, '[redacted]']);
    // Everything else is kept as sent.
    expect(headers).toMatchObject({ 'user-agent': 'probe/1.0', 'x-trace': 'abc123' });
  });
});

describe('isoTime', () => {
  afterEach(() => jest.useRealTimers());

  it("stamps a line's time exactly as pino's stdTimeFunctions.isoTime does", () => {
    for (const at of [Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2026, 10, 24, 12, 0, 0, 7), 0]) {
      jest.useFakeTimers({ now: at });
      expect(isoTime()).toBe(pino.stdTimeFunctions.isoTime());
    }
  });
});
