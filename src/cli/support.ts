import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InvalidArgumentError } from 'commander';
import { DataSource } from 'typeorm';
import { ListenError } from '../app';
import { AppModule, Role } from '../app.module';
import { AppError } from '../common/errors';
import { MissingPackageError } from '../common/optional-package';
import { AppConfig, ConfigError, describeDatabase } from '../config/config';
import { entitiesFor } from '../entities';
import { dataSourceOptions, runMigrations } from '../database/data-source';
import { isDatabaseUnavailable } from '../database/unavailable';

/** A failure the operator can act on: printed as one `error: …` line, exit 1, no stack. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/** The command was called wrongly (a bad option value): one `error: …` line, exit 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The configuration from the environment, read when a command runs (so `--help` never fails on it). */
export type ConfigSource = () => AppConfig;

/** A commander argument parser: a malformed value is a usage error (exit 2), the value kept as typed. */
export function usageCheck(parse: (v: string) => unknown): (v: string) => string {
  return (v) => {
    try {
      parse(v);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
    return v;
  };
}

/** Connection failures name the database and the cause, in one line. */
async function openDatabase(config: AppConfig): Promise<DataSource> {
  try {
    // dataSourceOptions creates the SQLite file's folder, which can fail too.
    const ds = new DataSource(dataSourceOptions(config.database, entitiesFor(config.hostSchema), config.hostSchema));
    await ds.initialize();
    return ds;
  } catch (err) {
    if (err instanceof MissingPackageError) throw err; // one line already, naming the package
    throw new CliError(`cannot open the database (${describeDatabase(config)}): ${firstLine(err)}`);
  }
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message || err.name : String(err);
  return text.split('\n')[0].trim();
}

/** Opens the configured database, migrated, for one CLI command, and always closes it. */
export async function withDataSource<T>(config: AppConfig, fn: (ds: DataSource, applied: string[]) => Promise<T>): Promise<T> {
  const ds = await openDatabase(config);
  try {
    const applied = await runMigrations(ds);
    return await fn(ds, applied);
  } finally {
    await ds.destroy();
  }
}

/** The whole app's modules without an HTTP listener (role `api`: no worker runs inside the CLI). */
export async function withAppContext<T>(config: AppConfig, role: Role, fn: (ctx: INestApplicationContext) => Promise<T>): Promise<T> {
  // Migrates first (the modules may start work at once), and reports an unreachable database plainly.
  await withDataSource(config, async () => undefined);
  const ctx = await NestFactory.createApplicationContext(AppModule.forRoot(config, { role }), { logger: false, abortOnError: false });
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}

/** One line for any failure; the stack stays out of an operator's terminal. */
export function describeFailure(err: unknown): string {
  if (err instanceof ConfigError) return `bad configuration: ${err.message}`;
  if (err instanceof CliError || err instanceof AppError || err instanceof ListenError) return err.message;
  // The same classification as the HTTP API's 503: the database went away while the command ran.
  if (isDatabaseUnavailable(err)) return `cannot reach the database: ${firstLine(err)}`;
  return firstLine(err);
}
