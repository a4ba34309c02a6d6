import type { ExecutionContext } from '@nestjs/common';
import { AppError } from './errors';
import { BodyErrorGuard, envelope, Paged } from './envelope';
import { BODY_ERROR } from './json-body.middleware';

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

  it('lets a request without a parked body error through', () => {
    expect(new BodyErrorGuard().canActivate(context({ headers: {} }))).toBe(true);
  });

  it('throws the parked error, on the Node request (express) or under fastify\'s wrapper', () => {
    const err = new AppError('INVALID_JSON', 'request body is not valid JSON');
    expect(() => new BodyErrorGuard().canActivate(context({ [BODY_ERROR]: err }))).toThrow(err);
    expect(() => new BodyErrorGuard().canActivate(context({ raw: { [BODY_ERROR]: err } }))).toThrow(err);
  });
});
