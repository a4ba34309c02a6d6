import { DynamicModule, FactoryProvider, Global, Inject, Module, ModuleMetadata, Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CLOCK, Clock, SystemClock } from '../common/clock';
import { dialectOf } from '../database/dialect';
import { TRENDHOOKS_DATA_SOURCE } from '../database/data-source.token';
import { SqliteCheckpointerService } from '../database/sqlite-checkpointer';
import { applyLoadedOpenApiMetadata } from '../openapi/swagger';
import { TRENDHOOKS_OPTIONS } from './tokens';

export interface TrendhooksModuleOptions {
  /**
   * The TypeORM connection trendhooks' tables live on: a connection name registered with
   * `TypeOrmModule.forRoot({ name })` (the default connection when omitted), or an initialized
   * DataSource the host manages itself.
   */
  dataSource?: string | DataSource;
  /** The one clock of every trendhooks module; `SystemClock` by default. */
  clock?: Clock;
}

/** What forRootAsync's factory may return: the connection is named outside it (see TrendhooksAsyncOptions.dataSource). */
export type TrendhooksModuleFactoryOptions = Omit<TrendhooksModuleOptions, 'dataSource'> & { dataSource?: DataSource };

export interface TrendhooksAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /**
   * The connection name, as TypeOrmModule.forRootAsync takes its `name`: outside the factory, since
   * the provider that waits for that connection is declared before the factory runs.
   */
  dataSource?: string;
  inject?: FactoryProvider['inject'];
  useFactory: (...args: never[]) => TrendhooksModuleFactoryOptions | Promise<TrendhooksModuleFactoryOptions>;
}

/**
 * The ground floor every trendhooks module stands on, like TypeOrmCoreModule or BullModule.forRoot:
 * the data source (TRENDHOOKS_DATA_SOURCE) and the one CLOCK. Global, so feature modules inject
 * both without importing it; it registers no APP_* providers. Its data source provider checks the
 * driver while the app boots: an unsupported one fails there (UnsupportedDatabaseError), never at
 * a first query. On a SQLite file opened with dataSourceOptions, it also runs the WAL checkpoints
 * on a thread of their own for the app's lifetime (SqliteCheckpointerService; not exported).
 *
 *   TrendhooksModule.forRoot({ dataSource: 'host' })
 *   TrendhooksModule.forRootAsync({ dataSource: 'host', imports, inject, useFactory: (s) => ({ clock: s.clock }) })
 */
@Global()
@Module({})
export class TrendhooksModule {
  constructor() {
    // A host that documents its app with @nestjs/swagger has loaded it by now: trendhooks' OpenAPI
    // decorators, waiting for it, take effect before the host's SwaggerModule.createDocument (src/openapi/swagger.ts).
    applyLoadedOpenApiMetadata();
  }

  static forRoot(options: TrendhooksModuleOptions = {}): DynamicModule {
    const name = typeof options.dataSource === 'string' ? options.dataSource : undefined;
    const factoryOptions: TrendhooksModuleFactoryOptions = { ...options, dataSource: typeof options.dataSource === 'string' ? undefined : options.dataSource };
    return TrendhooksModule.build(name, [{ provide: TRENDHOOKS_OPTIONS, useValue: factoryOptions }]);
  }

  static forRootAsync(options: TrendhooksAsyncOptions): DynamicModule {
    const module = TrendhooksModule.build(options.dataSource, [{ provide: TRENDHOOKS_OPTIONS, inject: options.inject ?? [], useFactory: options.useFactory }]);
    return { ...module, imports: options.imports ?? [] };
  }

  private static build(name: string | undefined, optionsProviders: Provider[]): DynamicModule {
    const dataSource: FactoryProvider<DataSource> = {
      provide: TRENDHOOKS_DATA_SOURCE,
      // Optional: a host that hands over a DataSource object needs no TypeOrmModule connection.
      inject: [TRENDHOOKS_OPTIONS, { token: getDataSourceToken(name), optional: true }],
      useFactory: (o: TrendhooksModuleFactoryOptions, named: DataSource | undefined) => {
        const ds = o.dataSource ?? named;
        if (!ds) {
          throw new Error(
            `TrendhooksModule: no TypeORM connection ${name ? `named "${name}"` : '(the default one)'}; register it with TypeOrmModule.forRoot(${name ? `{ name: '${name}', … }` : '…'}) or pass a DataSource`,
          );
        }
        dialectOf(ds);
        return ds;
      },
    };
    const clock: FactoryProvider<Clock> = { provide: CLOCK, inject: [TRENDHOOKS_OPTIONS], useFactory: (o: TrendhooksModuleFactoryOptions) => o.clock ?? new SystemClock() };
    return {
      module: TrendhooksModule,
      providers: [...optionsProviders, dataSource, clock, SqliteCheckpointerService],
      exports: [TRENDHOOKS_DATA_SOURCE, CLOCK, TRENDHOOKS_OPTIONS],
    };
  }
}

/** `@InjectTrendhooksOptions() o: TrendhooksModuleFactoryOptions`. */
export const InjectTrendhooksOptions = (): ParameterDecorator & PropertyDecorator => Inject(TRENDHOOKS_OPTIONS);
