import type { ExecutionContext } from '@nestjs/common';
import { AppError } from './errors';
import { BodyErrorGuard, envelope, Paged } from './envelope';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { BODY_ERROR, JsonBodyMiddleware } from './json-body.middleware';

describe('envelope', () => {
  it('puts a Paged result into data and meta.page', () => {
    const page = { limit: 2, next_cursor: 'c1', prev_cursor: null };
    expect(envelope('req_a', new Paged([1, 2], page))).toEqual({ data: [1, 2], meta: { request_id: 'req_a', page } });
  });

  it('puts any other value into data with meta.page null', () => {
    expect(envelope('req_b', { id: 'x' })).toEqual({ data: { id: 'x' }, meta: { request_id: 'req_b', page: null } });
    expect(envelope('req_b', null)).toEqual({ data: null, meta: { request_id: 'req_b', page: null } });
  });

  it('leaves undefined (a 204) without a body', () => {
    expect(envelope('req_c', undefined)).toBeUndefined();
  });
});

describe('BodyErrorGuard', () => {
  const context = (req: object) => ({ switchToHttp: () => ({ getRequest: () => req }) }) as unknown as ExecutionContext;

  it('lets a request without a parked body error through', async () => {
    await expect(new BodyErrorGuard().canActivate(context({ headers: {} }))).resolves.toBe(true);
  });

  it('throws the parked error, on the Node request (express) or under fastify\'s wrapper', async () => {
    const err = new AppError('INVALID_JSON', 'request body is not valid JSON');
    await expect(new BodyErrorGuard().canActivate(context({ [BODY_ERROR]: err }))).rejects.toThrow(err);
    await expect(new BodyErrorGuard().canActivate(context({ raw: { [BODY_ERROR]: err } }))).rejects.toThrow(err);
  });

  it('reads the body JsonBodyMiddleware left for after authentication, and only then', async () => {
    const stream = new PassThrough();
    const req = Object.assign(stream, { headers: { 'content-type': 'application/json', 'content-length': '11' } }) as unknown as IncomingMessage & { body?: unknown };
    new JsonBodyMiddleware().use(req, undefined, () => undefined);
    stream.end('{"a":[1,2]}');
    await new Promise((r) => setImmediate(r));
    // Nothing read by the middleware: the bytes wait in the stream.
    expect(req.body).toBeUndefined();
    expect(stream.readableLength).toBe(11);
    await expect(new BodyErrorGuard().canActivate(context(req))).resolves.toBe(true);
    expect(req.body).toEqual({ a: [1, 2] });
  });

  it('raises a body error found only on reading, after authentication', async () => {
    const stream = new PassThrough();
    const req = Object.assign(stream, { headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }) as unknown as IncomingMessage;
    new JsonBodyMiddleware().use(req, undefined, () => undefined);
    stream.end('{"a":');
    await expect(new BodyErrorGuard().canActivate(context(req))).rejects.toMatchObject({ code: 'INVALID_JSON' });
  });
});
