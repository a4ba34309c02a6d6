import {
  ArgumentsHost,
  Catch,
  Controller,
  DynamicModule,
  ExceptionFilter,
  Get,
  HttpException,
  Inject,
  Module,
  Query,
  ValidationPipe,
} from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Type } from 'class-transformer';
import { IsInt, Min } from 'class-validator';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import {
  ApiKeysModule,
  AuthModule,
  CryptoModule,
  DEFAULT_PLAN_LIMITS,
  generateEncryptionKey,
  DeliveryModule,
  PaginationModule,
  PostsModule,
  SsrfModule,
  StaticDnsResolver,
  TrendhooksModule,
  trendhooksEntities,
  trendhooksMigrations,
  WebhooksModule,
} from '../../src/index';
import type { Clock, DatabaseConfig, DeliveryModuleOptions, TrendhooksFeatures } from '../../src/index';

/**
 * A host Nest app that embeds trendhooks the way a customer's own service would: its own database
 * connection and migrations run, its own global pipe and filter, its own routes. Nothing here comes
 * from trendhooks' standalone AppModule.
 */

/** The host's own settings, injected into trendhooks' modules through forRootAsync. */
export const HOST_SETTINGS = Symbol('host:settings');
export interface HostSettings {
  cursorSecret: string;
  businessRequestsPerMinute: number;
  dns: Record<string, string[]>;
  denyCidrs: string;
  /** The host's clock, handed to every trendhooks module through TrendhooksModule.forRootAsync. */
  clock: Clock;
  /** Exact receivers let through the SSRF block list (a host passes its SSRF_ALLOW_DESTINATIONS, as the README's does). */
  allowDestinations?: string;
  /** Run the delivery worker in this process; default no (nothing is sent anywhere). */
  deliveryWorker?: boolean;
  /** More DeliveryModule options (the host's own transport, a shorter retry schedule…). */
  delivery?: Omit<DeliveryModuleOptions, 'worker'>;
}

@Module({})
export class HostSettingsModule {
  static forRoot(settings: HostSettings): DynamicModule {
    return { module: HostSettingsModule, providers: [{ provide: HOST_SETTINGS, useValue: settings }], exports: [HOST_SETTINGS] };
  }
}

/** The host's own clock (real time): the one every trendhooks module must use. */
export class HostClock implements Clock {
  now(): Date {
    return new Date();
  }
}

/** The host's error format: nothing like trendhooks' envelope, so the two cannot be confused. */
@Catch()
export class HostExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse();
    const status = exception instanceof HttpException ? exception.getStatus() : 500;
    const reason = exception instanceof HttpException ? (exception.getResponse() as { message?: unknown }).message ?? exception.message : 'oops';
    res.status(status).json({ ok: false, status, reason });
  }
}

export class EchoQuery {
  @Type(() => Number)
  @IsInt()
  @Min(1)
  n: number;
}

@Controller('host')
export class HostController {
  constructor(@Inject(HOST_SETTINGS) private readonly settings: HostSettings) {}

  @Get('ping')
  ping() {
    return { pong: true };
  }

  /** Validated by the host's global ValidationPipe (transform: the string becomes a number). */
  @Get('echo')
  echo(@Query() q: EchoQuery) {
    return { n: q.n, doubled: q.n * 2 };
  }
}

/** The host's own migration, recorded in its own table beside trendhooks'. */
export class HostNotes1700000000000 implements MigrationInterface {
  name = 'HostNotes1700000000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE TABLE host_notes (id integer PRIMARY KEY, body text NOT NULL)');
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE host_notes');
  }
}

/** The connection name of the host's database that trendhooks lives on (not the default one). */
export const HOST_CONNECTION = 'host';
export const HOST_MIGRATIONS_TABLE = 'host_migrations';
/** What this host uses: API keys and posts, but no `settings` table (it configures the cursor secret itself). */
export const HOST_FEATURES: TrendhooksFeatures = { apiKeys: true, posts: true, settings: false };

function typeOrmOptions(db: DatabaseConfig) {
  const common = {
    name: HOST_CONNECTION,
    entities: [...trendhooksEntities(HOST_FEATURES)],
    migrations: [HostNotes1700000000000, ...trendhooksMigrations(db.type, HOST_FEATURES)],
    migrationsRun: true,
    migrationsTableName: HOST_MIGRATIONS_TABLE,
    synchronize: false,
    logging: false,
  };
  return db.type === 'postgres' ? { type: 'postgres' as const, url: db.url, ...common } : { type: 'better-sqlite3' as const, database: db.path, ...common };
}

@Module({})
export class HostAppModule {
  static forRoot(db: DatabaseConfig, settings: HostSettings): DynamicModule {
    const fromSettings = { imports: [HostSettingsModule.forRoot(settings)], inject: [HOST_SETTINGS] };
    return {
      module: HostAppModule,
      imports: [
        HostSettingsModule.forRoot(settings),
        // The host's default connection holds something else entirely: trendhooks must not touch it.
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database: ':memory:', synchronize: false, logging: false }),
        // The host's named connection; it runs its own and trendhooks' migrations itself (migrationsRun), in its own table.
        TypeOrmModule.forRoot(typeOrmOptions(db)),
        // trendhooks' ground floor: that connection, and the host's clock for every module.
        TrendhooksModule.forRootAsync({ ...fromSettings, dataSource: HOST_CONNECTION, useFactory: (s: HostSettings) => ({ clock: s.clock }) }),
        // trendhooks' API keys as the host's identity (test/host-app/host-auth.module.ts brings its own).
        ApiKeysModule,
        AuthModule.forRootAsync({
          ...fromSettings,
          useFactory: (s: HostSettings) => ({
            plans: { ...DEFAULT_PLAN_LIMITS, business: { ...DEFAULT_PLAN_LIMITS.business, requestsPerMinute: s.businessRequestsPerMinute } },
          }),
        }),
        // The host's own key (a real host would keep it in its secret store).
        CryptoModule.forRoot({ keys: [generateEncryptionKey()] }),
        PaginationModule.forRootAsync({ ...fromSettings, useFactory: (s: HostSettings) => ({ secrets: [s.cursorSecret], ttlSeconds: 600 }) }),
        SsrfModule.forRootAsync({
          ...fromSettings,
          useFactory: (s: HostSettings) => ({ resolver: new StaticDnsResolver(s.dns), denyCidrs: s.denyCidrs, allowDestinations: s.allowDestinations }),
        }),
        // No worker in this process unless asked (then with the receiver CA of DELIVERY_CA_FILE, as the standalone's).
        DeliveryModule.forRootAsync({ ...fromSettings, useFactory: (s: HostSettings) => ({ ...s.delivery, worker: s.deliveryWorker ?? false }) }),
        WebhooksModule,
        PostsModule,
      ],
      controllers: [HostController],
      providers: [
        // The host's own global setup, deliberately unlike trendhooks' rules.
        { provide: APP_PIPE, useValue: new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }) },
        { provide: APP_FILTER, useClass: HostExceptionFilter },
      ],
    };
  }
}
