import { CanActivate, Controller, DynamicModule, ExecutionContext, Get, Injectable, Module, Req, UnauthorizedException } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  AuthModule,
  CryptoModule,
  DEFAULT_PLAN_LIMITS,
  DeliveryModule,
  generateEncryptionKey,
  PaginationModule,
  PortalModule,
  PortalSessionsModule,
  PortalSessionsService,
  PostsModule,
  SsrfModule,
  StaticDnsResolver,
  TrendhooksModule,
  trendhooksEntities,
  trendhooksMigrations,
  WebhooksModule,
  withPortalSessions,
} from '../../src/index';
import type { DatabaseConfig, Plan, PlanLimits, PrincipalResolver, TrendhooksFeatures, TrendhooksPrincipal } from '../../src/index';

/**
 * A host Nest app with its OWN identity: its users sign in with its own header (`X-Host-User`, a
 * stand-in for a session or a JWT), belong to its tenants, and its tenants are on its plans.
 * trendhooks' routes are put behind that identity through AuthModule's principalResolver; there is
 * no ApiKeysModule, and no `customers`/`api_keys` tables in the schema.
 */

export interface HostUser {
  id: string;
  tenantId: string;
}

/** The host's directory: who a token is, and which plan each tenant pays for (changed at run time). */
@Injectable()
export class HostDirectory {
  readonly users = new Map<string, HostUser>();
  readonly tenantPlans = new Map<string, Plan>();

  addUser(token: string, user: HostUser, plan: Plan): void {
    this.users.set(token, user);
    this.tenantPlans.set(user.tenantId, plan);
  }

  planOf(tenantId: string): Plan | undefined {
    return this.tenantPlans.get(tenantId);
  }
}

@Module({ providers: [HostDirectory], exports: [HostDirectory] })
export class HostIdentityModule {}

/** The host's global guard: identifies the caller and leaves `req.user`; each route decides what it needs. */
@Injectable()
export class HostAuthGuard implements CanActivate {
  constructor(private readonly directory: HostDirectory) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest();
    const token = req.headers['x-host-user'];
    const user = typeof token === 'string' ? this.directory.users.get(token) : undefined;
    if (user) req.user = user;
    return true;
  }
}

/** trendhooks' principal from the host's `req.user`, its tenant and the tenant's current plan. */
export class HostPrincipalResolver implements PrincipalResolver {
  constructor(private readonly directory: HostDirectory) {}

  async resolve(req: { user?: HostUser }): Promise<TrendhooksPrincipal | null> {
    const plan = req.user && this.directory.planOf(req.user.tenantId);
    return req.user && plan ? { tenantId: req.user.tenantId, plan } : null;
  }
}

@Controller('host')
export class HostMeController {
  @Get('me')
  me(@Req() req: { user?: HostUser }) {
    if (!req.user) throw new UnauthorizedException('sign in to the host');
    return { user: req.user };
  }
}

/** The host's own plan figures: a small quota and a small rate limit, so the tests reach them. */
export const HOST_PLANS: Record<Plan, PlanLimits> = {
  ...DEFAULT_PLAN_LIMITS,
  pro: { ...DEFAULT_PLAN_LIMITS.pro, requestsPerMinute: 4 },
  business: { ...DEFAULT_PLAN_LIMITS.business, maxWebhooks: 2, requestsPerMinute: 200 },
};

/** trendhooks' schema without ApiKeysModule's tables (`customers`, `api_keys`). */
export const HOST_AUTH_FEATURES: TrendhooksFeatures = { apiKeys: false };

export function hostAuthTypeOrmOptions(db: DatabaseConfig) {
  const common = {
    entities: trendhooksEntities(HOST_AUTH_FEATURES),
    migrations: trendhooksMigrations(db.type, HOST_AUTH_FEATURES),
    migrationsRun: true,
    migrationsTableName: 'host_migrations',
    synchronize: false,
    logging: false,
  };
  return db.type === 'postgres' ? { type: 'postgres' as const, url: db.url, ...common } : { type: 'better-sqlite3' as const, database: db.path, ...common };
}

@Module({})
export class HostAuthAppModule {
  /** `portal`: also the customer portal (PortalModule), its sessions known to AuthModule through withPortalSessions. */
  static forRoot(db: DatabaseConfig, dns: Record<string, string[]>, portal?: { frameAncestors?: string[] }): DynamicModule {
    return {
      module: HostAuthAppModule,
      imports: [
        HostIdentityModule,
        TypeOrmModule.forRoot(hostAuthTypeOrmOptions(db)),
        TrendhooksModule.forRoot(), // the default connection, the system clock
        // The host's identity behind trendhooks' routes, built on the host's own directory.
        portal
          ? AuthModule.forRootAsync({
              imports: [HostIdentityModule, PortalSessionsModule],
              inject: [HostDirectory, PortalSessionsService],
              useFactory: (directory: HostDirectory, sessions: PortalSessionsService) => ({
                plans: HOST_PLANS,
                principalResolver: new HostPrincipalResolver(directory),
                extendResolver: (r: PrincipalResolver) => withPortalSessions(sessions, r),
              }),
            })
          : AuthModule.forRootAsync({
              imports: [HostIdentityModule],
              inject: [HostDirectory],
              useFactory: (directory: HostDirectory) => ({ plans: HOST_PLANS, principalResolver: new HostPrincipalResolver(directory) }),
            }),
        ...(portal ? [PortalModule.forRoot({ frameAncestors: portal.frameAncestors })] : []),
        CryptoModule.forRoot({ keys: [generateEncryptionKey()] }),
        PaginationModule.forRoot({ secrets: ['host-auth-cursor-secret-0123456789abcdefghij'], ttlSeconds: 600 }),
        SsrfModule.forRoot({ resolver: new StaticDnsResolver(dns) }),
        DeliveryModule.forRoot({ worker: false }),
        WebhooksModule,
        PostsModule,
      ],
      controllers: [HostMeController],
      providers: [{ provide: APP_GUARD, useClass: HostAuthGuard }],
    };
  }
}
