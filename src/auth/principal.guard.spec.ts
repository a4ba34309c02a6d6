import { Controller, ExecutionContext, Get } from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { AppError } from '../common/errors';
import { ApiKeyPrincipalResolver } from './api-key.principal-resolver';
import type { ApiKeyService } from './api-key.service';
import { BusinessPlus, PRINCIPAL } from './plan.decorator';
import { PlanService } from './plan.service';
import { DEFAULT_PLAN_LIMITS, PlanLimits } from './plans';
import type { PrincipalResolver, TrendhooksPrincipal } from './principal';
import { PrincipalGuard } from './principal.guard';
import { RateLimitService } from './rate-limit.service';
import { MemoryRateLimitStore } from './rate-limit.store';

@Controller('open')
class OpenRoutes {
  @Get()
  list() {}
}

@Controller('gated')
@BusinessPlus()
class GatedRoutes {
  @Get()
  list() {}
}

type FakeReq = { ip: string; headers: Record<string, string>; rawHeaders: string[]; [PRINCIPAL]?: TrendhooksPrincipal };
type FakeRes = { headers: Record<string, string> };

const NOW = new Date(Date.UTC(2025, 0, 1, 12, 0, 10));
const PLANS: Record<string, PlanLimits> = {
  ...DEFAULT_PLAN_LIMITS,
  free: { ...DEFAULT_PLAN_LIMITS.free, requestsPerMinute: 3 },
  business: { ...DEFAULT_PLAN_LIMITS.business, requestsPerMinute: 5 },
};

/** The resolver answers whatever the test sets, as a host's would from its own request state. */
class FakeResolver implements PrincipalResolver {
  answer: () => Promise<TrendhooksPrincipal | null | undefined> = async () => null;
  calls = 0;
  resolve() {
    this.calls++;
    return this.answer();
  }
}

describe('PrincipalGuard', () => {
  let resolver: FakeResolver;
  let guard: PrincipalGuard;

  const build = (r: PrincipalResolver) => {
    const limits = new RateLimitService(new MemoryRateLimitStore(), { now: () => NOW });
    const adapterHost = { httpAdapter: { setHeader: (res: FakeRes, k: string, v: string) => (res.headers[k] = v) } } as unknown as HttpAdapterHost;
    return new PrincipalGuard(r, limits, new PlanService({ plans: PLANS as never }), new Reflector(), adapterHost, { unauthenticatedPerMinute: 2 });
  };

  const call = async (routes: typeof OpenRoutes | typeof GatedRoutes = OpenRoutes, ip = '192.0.2.1', headers: Record<string, string> = {}) => {
    const req: FakeReq = { ip, headers, rawHeaders: Object.entries(headers).flat() };
    const res: FakeRes = { headers: {} };
    const context = {
      switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }),
      getHandler: () => routes.prototype.list,
      getClass: () => routes,
    } as unknown as ExecutionContext;
    const outcome = await guard.canActivate(context).then(
      (ok) => ({ ok, error: undefined as unknown }),
      (error: unknown) => ({ ok: false, error }),
    );
    return { ...outcome, req, res };
  };

  beforeEach(() => {
    resolver = new FakeResolver();
    guard = build(resolver);
  });

  it.each([null, undefined])('answers 401 UNAUTHORIZED with the Bearer challenge when the resolver gives %s, charged to the address', async (none) => {
    resolver.answer = async () => none;
    const r = await call();
    expect(r.error).toBeInstanceOf(AppError);
    expect(r.error).toMatchObject({ code: 'UNAUTHORIZED', headers: { 'WWW-Authenticate': 'Bearer realm="trendhooks"' } });
    expect(r.res.headers).toMatchObject({ 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '1' });
    expect(r.req[PRINCIPAL]).toBeUndefined();
  });

  it('answers 429 RATE_LIMITED once an address is over the unauthenticated limit, and leaves other addresses alone', async () => {
    resolver.answer = async () => null;
    await call();
    await call();
    const third = await call();
    expect(third.error).toMatchObject({ code: 'RATE_LIMITED', headers: { 'Retry-After': '50' } });
    expect(third.res.headers['X-RateLimit-Remaining']).toBe('0');
    expect((await call(OpenRoutes, '192.0.2.2')).error).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it("answers a resolver's AppError as is, charged to the address like any failed authentication", async () => {
    resolver.answer = async () => {
      throw new AppError('UNAUTHORIZED', 'host session expired', { 'WWW-Authenticate': 'Cookie' });
    };
    const r = await call();
    expect(r.error).toMatchObject({ code: 'UNAUTHORIZED', message: 'host session expired', headers: { 'WWW-Authenticate': 'Cookie' } });
    expect(r.res.headers['X-RateLimit-Limit']).toBe('2');
    await call();
    expect((await call()).error).toMatchObject({ code: 'RATE_LIMITED' });
  });

  it("passes any other resolver error through untouched (the error filter answers it 500 or 503), charging no counter", async () => {
    const boom = new Error('host directory down');
    resolver.answer = async () => {
      throw boom;
    };
    for (let i = 0; i < 4; i++) {
      const r = await call();
      expect(r.error).toBe(boom);
      expect(r.res.headers).toEqual({});
    }
  });

  it('lets a principal through, sets it on the request, and sends the rate-limit headers of its plan', async () => {
    const alice: TrendhooksPrincipal = { tenantId: 'tenant-a', plan: 'business' };
    resolver.answer = async () => alice;
    const r = await call(GatedRoutes);
    expect(r).toMatchObject({ ok: true, error: undefined });
    expect(r.req[PRINCIPAL]).toBe(alice);
    expect(r.res.headers).toEqual({
      'X-RateLimit-Limit': '5',
      'X-RateLimit-Remaining': '4',
      'X-RateLimit-Reset': '50',
      'RateLimit-Policy': '"default";q=5;w=60',
      RateLimit: '"default";r=4;t=50',
    });
  });

  it('refuses a Business+ route to a free-plan principal with PLAN_REQUIRED, and opens the other routes to it', async () => {
    resolver.answer = async () => ({ tenantId: 'tenant-f', plan: 'free' });
    const gated = await call(GatedRoutes);
    expect(gated.error).toMatchObject({ code: 'PLAN_REQUIRED', message: expect.stringContaining('your plan is free') });
    expect(gated.req[PRINCIPAL]).toBeUndefined();
    expect((await call(OpenRoutes)).ok).toBe(true);
  });

  it('counts one budget per tenant by default, and per rateLimitKey when the principal names one', async () => {
    resolver.answer = async () => ({ tenantId: 'tenant-b', plan: 'free' });
    for (let i = 0; i < 3; i++) expect((await call()).ok).toBe(true);
    const over = await call();
    expect(over.error).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('rate limit of 3 requests per minute') });
    expect(over.res.headers['X-RateLimit-Remaining']).toBe('0');
    // Another tenant, and another user's own budget within the same tenant, are counted apart.
    resolver.answer = async () => ({ tenantId: 'tenant-c', plan: 'free' });
    expect((await call()).ok).toBe(true);
    resolver.answer = async () => ({ tenantId: 'tenant-b', plan: 'free', rateLimitKey: 'user:u2' });
    expect((await call()).res.headers['X-RateLimit-Remaining']).toBe('2');
    // A resolved principal is never charged to the address's unauthenticated budget.
    resolver.answer = async () => null;
    expect((await call()).res.headers['X-RateLimit-Remaining']).toBe('1');
  });

  it.each([
    ['an empty tenant id', { tenantId: '', plan: 'business' }, /tenantId/],
    ['a tenant id longer than the customer_id columns', { tenantId: 't'.repeat(41), plan: 'business' }, /tenantId/],
    ['a tenant id that is not a string', { tenantId: 42, plan: 'business' }, /tenantId/],
    ['a plan not in the table', { tenantId: 'tenant-d', plan: 'platinum' }, /plan "platinum"/],
    ['a rate-limit key among the address counters', { tenantId: 'tenant-d', plan: 'business', rateLimitKey: 'ip:192.0.2.9' }, /rateLimitKey/],
    ['not an object', 'tenant-d', /not a principal/],
  ])("refuses %s from the resolver as the resolver's bug (a plain Error: 500), storing nothing", async (_what, answer, message) => {
    resolver.answer = async () => answer as unknown as TrendhooksPrincipal;
    const r = await call(GatedRoutes);
    expect(r.error).toBeInstanceOf(Error);
    expect(r.error).not.toBeInstanceOf(AppError);
    expect((r.error as Error).message).toMatch(message);
    expect(r.req[PRINCIPAL]).toBeUndefined();
    expect(r.res.headers).toEqual({});
  });

  describe('with ApiKeyPrincipalResolver (the default identity)', () => {
    const keys = {
      authenticate: async (header: unknown) => {
        if (header !== 'Bearer good') throw new AppError('UNAUTHORIZED', 'API key is unknown or revoked');
        return { customerId: 'cus_1', plan: 'business' as const, keyId: 'key_1' };
      },
    } as unknown as ApiKeyService;

    beforeEach(() => {
      guard = build(new ApiKeyPrincipalResolver(keys));
    });

    it("maps the key's customer to the tenant and charges the key's own budget", async () => {
      const r = await call(GatedRoutes, '192.0.2.1', { authorization: 'Bearer good' });
      expect(r.req[PRINCIPAL]).toEqual({ tenantId: 'cus_1', plan: 'business', rateLimitKey: 'key:key_1', keyId: 'key_1' });
      expect(r.res.headers['X-RateLimit-Remaining']).toBe('4');
    });

    it('refuses a request with two Authorization headers before looking the key up', async () => {
      const req = { ip: '192.0.2.1', headers: { authorization: 'Bearer good' }, rawHeaders: ['Authorization', 'Bearer good', 'authorization', 'Bearer other'] };
      const err = await new ApiKeyPrincipalResolver(keys).resolve(req).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringContaining('this request has 2') });
    });
  });
});
