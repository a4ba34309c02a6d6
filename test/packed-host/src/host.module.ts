import { DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule, TypeOrmModuleOptions } from '@nestjs/typeorm';
import {
  AuthModule, CryptoModule, DeliveryModule, PaginationModule, PostsModule, SsrfModule, WebhooksModule,
  POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS, TRENDHOOKS_ENTITIES, parseEncryptionKeys,
} from 'trendhooks';
import { Column, Entity, MigrationInterface, PrimaryColumn, QueryRunner } from 'typeorm';

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

/** One of your own tables, beside trendhooks' in the same database. */
@Entity('host_note')
export class HostNote {
  @PrimaryColumn('varchar', { length: 26 })
  id: string;

  @Column('text')
  body: string;
}

export class CreateHostNote1700000000000 implements MigrationInterface {
  name = 'CreateHostNote1700000000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE TABLE host_note (id varchar(26) PRIMARY KEY, body text NOT NULL)');
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE host_note');
  }
}

/** Your connection: your entities and migrations beside trendhooks', in your own migrations table. */
function database(s: HostSettings): TypeOrmModuleOptions {
  const common = { entities: [...TRENDHOOKS_ENTITIES, HostNote], migrationsTableName: 'host_migrations', migrationsRun: true };
  return s.database.startsWith('postgres')
    ? { type: 'postgres', url: s.database, migrations: [...POSTGRES_MIGRATIONS, CreateHostNote1700000000000], ...common }
    : { type: 'better-sqlite3', database: s.database, migrations: [...SQLITE_MIGRATIONS, CreateHostNote1700000000000], ...common };
}

@Module({})
export class HostModule {
  static forRoot(s: HostSettings): DynamicModule {
    return {
      module: HostModule,
      imports: [
        TypeOrmModule.forRoot(database(s)),
        ScheduleModule.forRoot(), // optional: the delivery worker's poll then shows in your SchedulerRegistry
        AuthModule.forRoot({}), // plans, rateLimitStore
        CryptoModule.forRoot({ keys: parseEncryptionKeys(s.encryptionKeys) }),
        PaginationModule.forRoot({ secrets: [s.cursorSecret] }),
        SsrfModule.forRoot({ allowDestinations: s.allowDestinations }),
        DeliveryModule.forRoot({ worker: true, ca: s.receiverCa }), // worker: false in API-only processes
        WebhooksModule,
        PostsModule,
      ],
    };
  }
}
