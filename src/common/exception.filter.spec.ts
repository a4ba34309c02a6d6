import { BadRequestException, HttpStatus, Logger, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
import type { ArgumentsHost } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import { AppError } from './errors';
import { ApiExceptionFilter, DatabaseUnavailableClassifier, toErrorResponse, UnmatchedRouteHook } from './exception.filter';

/** A hand-written classifier: the outage is whatever carries this marker (the real ones live in src/database). */
const OUTAGE = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', outage: true });
const outages: DatabaseUnavailableClassifier = (err) => (err as { outage?: unknown } | null)?.outage === true;

describe('toErrorResponse', () => {
  it('maps what the classifier calls a database outage to 503 SERVICE_UNAVAILABLE with Retry-After: 1 and no internals', () => {
    const err = toErrorResponse(OUTAGE, 'GET', '/v1/webhooks', outages);
    expect(err).toBeInstanceOf(AppError);
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect(err.status).toBe(503);
    expect(err.headers).toEqual({ 'Retry-After': '1' });
    expect(err.message).not.toMatch(/ECONNREFUSED|5432/);
  });

  it('still maps other unexpected errors (a broken schema) to 500 INTERNAL_ERROR', () => {
    const err = toErrorResponse(Object.assign(new Error('relation "webhooks" does not exist'), { code: '42P01' }), 'GET', '/v1/webhooks', outages);
    expect([err.code, err.status, err.message]).toEqual(['INTERNAL_ERROR', 500, 'internal error']);
  });

  it('classifies nothing as an outage without a classifier (a host app that provides none)', () => {
    const err = toErrorResponse(OUTAGE);
    expect([err.code, err.status, err.headers]).toEqual(['INTERNAL_ERROR', 500, {}]);
  });

  it('leaves AppErrors and HTTP exceptions as they were', () => {
    expect(toErrorResponse(new AppError('RATE_LIMITED', 'slow down', { 'Retry-After': '7' })).headers).toEqual({ 'Retry-After': '7' });
    expect(toErrorResponse(new BadRequestException('nope')).code).toBe('BAD_REQUEST');
    const unavailable = toErrorResponse(new ServiceUnavailableException('down'));
    expect([unavailable.code, unavailable.headers]).toEqual(['SERVICE_UNAVAILABLE', {}]);
  });
});

describe('ApiExceptionFilter', () => {
  function run(exception: unknown, classifier?: DatabaseUnavailableClassifier, unmatched?: UnmatchedRouteHook) {
    const headers: Record<string, string> = {};
    let status = 0;
    let body: any;
    const adapterHost = {
      httpAdapter: {
        setHeader: (_res: unknown, name: string, value: string) => (headers[name] = value),
        reply: (_res: unknown, b: unknown, s: number) => ((body = b), (status = s)),
      },
    } as unknown as HttpAdapterHost;
    const req = { method: 'POST', url: '/v1/webhooks', headers: { 'x-request-id': 'req-1' } };
    const res = { headersSent: false, setHeader: (n: string, v: string) => (headers[n] = v), getHeader: () => undefined };
    const host = { switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }) } as unknown as ArgumentsHost;
    const done = new ApiExceptionFilter(adapterHost, classifier, unmatched).catch(exception, host);
    // Getters: an unmatched route's answer is written once the hook settles.
    return { get status() { return status; }, headers, get body() { return body; }, done };
  }

  it('answers a database outage with 503, Retry-After: 1 and the error envelope, logged as a warning without the stack', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const out = run(OUTAGE, outages);
      expect(out.status).toBe(HttpStatus.SERVICE_UNAVAILABLE);
      expect(out.headers['Retry-After']).toBe('1');
      expect(out.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(typeof out.body.error.request_id).toBe('string');
      expect(JSON.stringify(out.body)).not.toContain('ECONNREFUSED');
      expect(warn).toHaveBeenCalledTimes(1);
      expect(JSON.stringify(warn.mock.calls[0])).toContain('ECONNREFUSED');
      expect(JSON.stringify(warn.mock.calls[0])).not.toContain('    at ');
      expect(error).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      error.mockRestore();
    }
  });

  it('still answers 500 and logs an error for anything unexpected', () => {
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const out = run(new Error('boom'), outages);
      expect(out.status).toBe(500);
      expect(out.headers['Retry-After']).toBeUndefined();
      expect(error).toHaveBeenCalledTimes(1);
    } finally {
      error.mockRestore();
    }
  });

  describe('a request that matched no route', () => {
    it('lets the unmatched-route hook set headers before the 404', async () => {
      const hook = jest.fn<ReturnType<UnmatchedRouteHook>, Parameters<UnmatchedRouteHook>>(async (host) => {
        host.switchToHttp().getResponse<{ setHeader(n: string, v: string): void }>().setHeader('X-RateLimit-Limit', '3');
        return undefined;
      });
      const out = run(new NotFoundException('Cannot GET /v1/nope'), undefined, hook);
      await out.done;
      expect(hook).toHaveBeenCalledTimes(1);
      expect(out.status).toBe(404);
      expect(out.headers['X-RateLimit-Limit']).toBe('3');
      expect(out.body.error).toMatchObject({ code: 'NOT_FOUND', message: 'no route POST /v1/webhooks' });
    });

    it("answers the hook's error instead when it gives one (rate limited)", async () => {
      const out = run(new NotFoundException(), undefined, async () => new AppError('RATE_LIMITED', 'slow down', { 'Retry-After': '9' }));
      await out.done;
      expect([out.status, out.body.error.code, out.headers['Retry-After']]).toEqual([429, 'RATE_LIMITED', '9']);
    });

    it('answers a failing hook as any unexpected error', async () => {
      const out = run(new NotFoundException(), outages, async () => {
        throw OUTAGE;
      });
      await out.done;
      expect([out.status, out.body.error.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
    });

    it("never calls it for a route's own NOT_FOUND (an absent webhook)", () => {
      const hook = jest.fn<ReturnType<UnmatchedRouteHook>, Parameters<UnmatchedRouteHook>>();
      const out = run(new AppError('NOT_FOUND', 'webhook x not found'), undefined, hook);
      expect(out.done).toBeUndefined();
      expect(hook).not.toHaveBeenCalled();
      expect([out.status, out.body.error.message]).toEqual([404, 'webhook x not found']);
    });
  });
});
