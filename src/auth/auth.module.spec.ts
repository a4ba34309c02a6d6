import { Global, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { CLOCK, SystemClock } from '../common/clock';
import { AuthModule } from './auth.module';
import { NO_PRINCIPAL_RESOLVER } from './principal';
import { PrivateDestinationsService } from './private-destinations.service';
import { InjectPrincipalResolver, NO_RESOLVER, PRINCIPAL_RESOLVER, PrincipalResolver, requirePrincipalResolver, TrendhooksPrincipal } from './principal';
import { PrincipalGuard } from './principal.guard';

/** A host's own directory of users, reached by the resolver through forRootAsync. */
@Injectable()
class HostUsers {
  readonly byName = new Map<string, TrendhooksPrincipal>([['ada', { tenantId: 'org-1', plan: 'business' }]]);
}

@Module({ providers: [HostUsers], exports: [HostUsers] })
class HostUsersModule {}

class HostResolver implements PrincipalResolver {
  constructor(private readonly users: HostUsers) {}
  async resolve(req: { user?: string }) {
    return req.user === undefined ? null : this.users.byName.get(req.user);
  }
}

@Injectable()
class UsesResolver {
  constructor(@InjectPrincipalResolver() readonly resolver: PrincipalResolver) {}
}

/** The one clock TrendhooksModule gives every module in an app. */
@Global()
@Module({ providers: [{ provide: CLOCK, useClass: SystemClock }], exports: [CLOCK] })
class ClockModule {}

describe('AuthModule', () => {
  it('boots with neither a principalResolver nor ApiKeysModule for a host that serves no trendhooks routes, and answers no caller', async () => {
    const ref = await Test.createTestingModule({ imports: [ClockModule, AuthModule.forRoot({})] }).compile();
    const resolver = ref.get<PrincipalResolver>(PRINCIPAL_RESOLVER);
    expect(resolver).toBe(NO_RESOLVER);
    await expect(resolver.resolve({}, undefined as never)).rejects.toThrow(NO_PRINCIPAL_RESOLVER);
  });

  it('refuses to boot a module with routes, naming both ways out, with neither a principalResolver nor ApiKeysModule', async () => {
    // Like WebhooksModule and PostsModule: it imports AuthModule, whose options the host's forRoot set.
    @Module({ imports: [AuthModule] })
    class WithRoutes {
      constructor(@InjectPrincipalResolver() resolver: PrincipalResolver) {
        requirePrincipalResolver(resolver);
      }
    }
    await expect(Test.createTestingModule({ imports: [ClockModule, AuthModule.forRoot({}), WithRoutes] }).compile()).rejects.toThrow(NO_PRINCIPAL_RESOLVER);
    await expect(Test.createTestingModule({ imports: [ClockModule, AuthModule.forRootAsync({ useFactory: () => ({}) }), WithRoutes] }).compile()).rejects.toThrow(/principalResolver.*ApiKeysModule/);
    const host = { resolve: async () => null };
    await expect(Test.createTestingModule({ imports: [ClockModule, AuthModule.forRoot({ principalResolver: host }), WithRoutes] }).compile()).resolves.toBeDefined();
  });

  it('refuses to boot with a principalResolver that has no resolve method', async () => {
    const bad = { resolve: 'nope' } as unknown as PrincipalResolver;
    await expect(Test.createTestingModule({ imports: [ClockModule, AuthModule.forRoot({ principalResolver: bad })] }).compile()).rejects.toThrow(/resolve\(request, context\)/);
  });

  it("takes the host's resolver from forRootAsync, built on the host's own services, and gives it to the guard and to InjectPrincipalResolver()", async () => {
    const ref = await Test.createTestingModule({
      imports: [ClockModule, AuthModule.forRootAsync({ imports: [HostUsersModule], inject: [HostUsers], useFactory: (users: HostUsers) => ({ principalResolver: new HostResolver(users) }) })],
      providers: [UsesResolver],
    }).compile();
    const resolver = ref.get<PrincipalResolver>(PRINCIPAL_RESOLVER);
    expect(resolver).toBeInstanceOf(HostResolver);
    expect(ref.get(UsesResolver).resolver).toBe(resolver);
    expect(ref.get(PrincipalGuard)).toBeInstanceOf(PrincipalGuard);
    expect(await resolver.resolve({ user: 'ada' }, undefined as never)).toEqual({ tenantId: 'org-1', plan: 'business' });
    expect(await resolver.resolve({}, undefined as never)).toBeNull();
  });

  it('gives tenants no private-destination grants without the customers table (ApiKeysModule), and says so to an operator', async () => {
    const ref = await Test.createTestingModule({ imports: [ClockModule, AuthModule.forRoot({ principalResolver: new HostResolver(new HostUsers()) })] }).compile();
    const grants = ref.get(PrivateDestinationsService);
    expect(await grants.forCustomer('org-1')).toEqual([]);
    await expect(grants.allow('org-1', '10.0.0.0/8:443')).rejects.toThrow(/import ApiKeysModule/);
  });
});
