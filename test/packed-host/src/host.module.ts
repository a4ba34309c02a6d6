import { Body, CanActivate, Controller, DynamicModule, ExecutionContext, Injectable, Module, Post } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { InjectDataSource, TypeOrmModule, TypeOrmModuleOptions } from '@nestjs/typeorm';
import {
  AuthModule, CryptoModule, DeliveryModule, PaginationModule, SsrfModule, TrendhooksModule, WebhooksModule,
  Plan, PrincipalResolver, TrendhooksFeatures, TrendhooksPrincipal, parseEncryptionKeys, trendhooksEntities, trendhooksMigrations,
} from 'trendhooks';
import { Column, DataSource, Entity, MigrationInterface, PrimaryColumn, QueryRunner } from 'typeorm';

/** Your settings, from wherever you keep them (config service, environment, secret store). */
export interface HostSettings {
  /** `postgres://…`, or the path of a SQLite file. */
  database: string;
  /** The key ring signing secrets are stored under: `id:base64key,…`, 32-byte keys (`k1:$(openssl rand -base64 32)`). */
  encryptionKeys: string;
  /** Signs pagination cursors: 32 characters or more. */
  cursorSecret: string;
  /** Exact receivers let through the SSRF block list, e.g. `127.0.0.1:9443` for a local test receiver. */
  allowDestinations?: string;
  /** PEM of a CA trusted for receivers with private certificates. */
  receiverCa?: string;
}

/** Your connection's name: trendhooks' tables live on it, beside yours. */
export const HOST_CONNECTION = 'host';

/** What of trendhooks' schema you use: no API keys (your users are the identity), cursor secrets given, no post ingestion. */
export const FEATURES: TrendhooksFeatures = { apiKeys: false, settings: false, posts: false };

/** Your users (a sign-in token, their tenant) and your tenants (the plan they pay for). */
@Entity('host_user')
export class HostUser {
  @PrimaryColumn('varchar', { length: 64 })
  token!: string;

  @Column('varchar', { name: 'tenant_id', length: 40 })
  tenantId!: string;
}

@Entity('host_tenant')
export class HostTenant {
  @PrimaryColumn('varchar', { length: 40 })
  id!: string;

  @Column('varchar', { length: 20 })
  plan!: Plan;
}

export class CreateHostUsers1700000000000 implements MigrationInterface {
  name = 'CreateHostUsers1700000000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE TABLE host_tenant (id varchar(40) PRIMARY KEY, plan varchar(20) NOT NULL)');
    await q.query('CREATE TABLE host_user (token varchar(64) PRIMARY KEY, tenant_id varchar(40) NOT NULL REFERENCES host_tenant (id))');
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE host_user');
    await q.query('DROP TABLE host_tenant');
  }
}

@Injectable()
export class HostDirectory {
  constructor(@InjectDataSource(HOST_CONNECTION) private readonly ds: DataSource) {}
  userByToken(token: string): Promise<HostUser | null> {
    return this.ds.getRepository(HostUser).findOneBy({ token });
  }
  async planOf(tenantId: string): Promise<Plan | undefined> {
    return (await this.ds.getRepository(HostTenant).findOneBy({ id: tenantId }))?.plan;
  }
  async signUp(token: string, tenantId: string, plan: Plan): Promise<void> {
    await this.ds.getRepository(HostTenant).save({ id: tenantId, plan });
    await this.ds.getRepository(HostUser).save({ token, tenantId });
  }
}

/** Your global guard: who calls (`Authorization: Bearer <token>`), left in `req.user`; each route decides what it needs. */
@Injectable()
export class HostAuthGuard implements CanActivate {
  constructor(private readonly directory: HostDirectory) {}
  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest();
    const token = /^Bearer (\S+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    req.user = token ? ((await this.directory.userByToken(token)) ?? undefined) : undefined;
    return true;
  }
}

/** trendhooks' principal from your `req.user`: the tenant owns the webhooks, its current plan sets the limits. */
export class HostPrincipalResolver implements PrincipalResolver {
  constructor(private readonly directory: HostDirectory) {}
  async resolve(req: { user?: HostUser }): Promise<TrendhooksPrincipal | null> {
    const plan = req.user && (await this.directory.planOf(req.user.tenantId));
    return req.user && plan ? { tenantId: req.user.tenantId, plan } : null; // null: 401 in trendhooks' envelope
  }
}

/** One of your routes (a stand-in for your sign-up flow), its JSON body read by Nest's body parser, left on. */
@Controller('host/signup')
export class HostSignUpController {
  constructor(private readonly directory: HostDirectory) {}
  @Post()
  async signUp(@Body() body: { token: string; tenantId: string; plan: Plan }): Promise<{ token: string }> {
    await this.directory.signUp(body.token, body.tenantId, body.plan);
    return { token: body.token };
  }
}

@Module({ providers: [HostDirectory], exports: [HostDirectory] })
export class HostDirectoryModule {}

/** Your connection: your entities and migrations beside trendhooks', in your own migrations table. */
export function database(s: HostSettings): TypeOrmModuleOptions {
  const dialect = s.database.startsWith('postgres') ? 'postgres' : 'sqlite';
  const common = {
    name: HOST_CONNECTION,
    entities: [HostUser, HostTenant, ...trendhooksEntities(FEATURES)],
    migrations: [CreateHostUsers1700000000000, ...trendhooksMigrations(dialect, FEATURES)],
    migrationsTableName: 'host_migrations',
    migrationsRun: true,
  };
  return dialect === 'postgres' ? { type: 'postgres', url: s.database, ...common } : { type: 'better-sqlite3', database: s.database, ...common };
}

@Module({})
export class HostModule {
  static forRoot(s: HostSettings): DynamicModule {
    return {
      module: HostModule,
      imports: [
        TypeOrmModule.forRoot(database(s)),
        TrendhooksModule.forRoot({ dataSource: HOST_CONNECTION }), // the connection and the one clock of every trendhooks module
        ScheduleModule.forRoot(), // optional: the delivery worker's poll then shows in your SchedulerRegistry
        HostDirectoryModule,
        AuthModule.forRootAsync({ // no ApiKeysModule: your users are the identity
          imports: [HostDirectoryModule],
          inject: [HostDirectory],
          useFactory: (directory: HostDirectory) => ({ principalResolver: new HostPrincipalResolver(directory) }), // plans, rateLimitStore too
        }),
        CryptoModule.forRoot({ keys: parseEncryptionKeys(s.encryptionKeys) }),
        PaginationModule.forRoot({ secrets: [s.cursorSecret] }),
        SsrfModule.forRoot({ allowDestinations: s.allowDestinations }),
        DeliveryModule.forRoot({ worker: true, ca: s.receiverCa }), // worker: false in API-only processes
        WebhooksModule,
      ],
      controllers: [HostSignUpController],
      providers: [{ provide: APP_GUARD, useClass: HostAuthGuard }], // your guard runs before trendhooks'
    };
  }
}
