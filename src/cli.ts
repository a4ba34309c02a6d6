import 'reflect-metadata';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Command, CommanderError } from 'commander';
import { DataSource } from 'typeorm';
import { serve } from './app';
import { ApiKeyService } from './auth/api-key.service';
import { AuthModule } from './auth/auth.module';
import { AppError } from './common/errors';
import { AppConfig, ConfigError, loadConfig, PLANS } from './config/config';
import { dataSourceOptions, runMigrations, schemaDrift } from './database/data-source';

/** Opens the configured database, migrated, for one CLI command, and always closes it. */
async function withDataSource<T>(config: AppConfig, fn: (ds: DataSource) => Promise<T>): Promise<T> {
  const ds = new DataSource(dataSourceOptions(config.database));
  await ds.initialize();
  try {
    await runMigrations(ds);
    return await fn(ds);
  } finally {
    await ds.destroy();
  }
}

async function withKeys<T>(config: AppConfig, fn: (keys: ApiKeyService) => Promise<T>): Promise<T> {
  @Module({ imports: [TypeOrmModule.forRoot(dataSourceOptions(config.database)), AuthModule.forRoot({ plans: config.plans })] })
  class KeysCliModule {}
  const ctx = await NestFactory.createApplicationContext(KeysCliModule, { logger: false, abortOnError: false });
  try {
    await runMigrations(ctx.get(DataSource));
    return await fn(ctx.get(ApiKeyService));
  } finally {
    await ctx.close();
  }
}

export function buildCli(env: Record<string, string | undefined>): Command {
  const config = () => loadConfig(env);
  const program = new Command('trendhooks')
    .description('Trend events from subreddits, delivered as signed webhooks.')
    .showHelpAfterError()
    .exitOverride();

  program
    .command('serve')
    .description('run the HTTP API (and, with later roles, the worker and the trend pipeline)')
    .action(async () => {
      await serve(config());
    });

  program
    .command('migrate')
    .description('apply pending database migrations (DATABASE_URL picks the database)')
    .option('--check', 'fail when the entities and the migrations have drifted apart')
    .option('--generate <Name>', '(developers) write a migration for the entity changes, for the configured driver')
    .action(async (opts: { check?: boolean; generate?: string }) => {
      const cfg = config();
      await withDataSource(cfg, async (ds) => {
        const drift = await schemaDrift(ds);
        if (opts.generate) {
          if (drift.up.length === 0) return console.log('no entity changes; nothing generated');
          const file = writeMigration(cfg.database.type, opts.generate, drift);
          console.log(`wrote ${file}`);
          return;
        }
        if (opts.check && drift.up.length > 0) {
          console.error(`schema drift on ${cfg.database.type}: the entities need\n  ${drift.up.join(';\n  ')}`);
          process.exitCode = 1;
          return;
        }
        console.log(opts.check ? `no drift on ${cfg.database.type}` : `database is up to date (${cfg.database.type})`);
      });
    });

  const keys = program.command('keys').description('issue and revoke API keys');
  keys
    .command('create')
    .description('issue an API key (the customer is created when new); the key is printed once')
    .requiredOption('--customer <name>', 'customer name')
    .requiredOption('--plan <plan>', `plan: ${PLANS.join(', ')}`)
    .option('--json', 'print one JSON object')
    .action(async (opts: { customer: string; plan: string; json?: boolean }) => {
      const issued = await withKeys(config(), (k) => k.issue(opts.customer, opts.plan));
      if (opts.json) return console.log(JSON.stringify(issued));
      console.log(`API key for ${issued.customer} (${issued.customer_id}, plan ${issued.plan}):\n\n  ${issued.key}\n\nIt is shown only now; trendhooks keeps only its SHA-256 hash. Revoke it with: trendhooks keys revoke ${issued.prefix}`);
    });
  keys
    .command('revoke')
    .description('revoke an API key by its prefix (the first 16 characters) or the whole key')
    .argument('<prefix>', 'key prefix, e.g. th_live_AbCd1234')
    .action(async (prefix: string) => {
      const n = await withKeys(config(), (k) => k.revoke(prefix));
      if (n === 0) {
        console.error(`no active key matches ${prefix}`);
        process.exitCode = 1;
        return;
      }
      console.log(`revoked ${prefix}`);
    });

  return program;
}

/** Writes a migration file from the schema builder's SQL (the same SQL `--check` compares against). */
function writeMigration(type: string, name: string, drift: { up: string[]; down: string[] }): string {
  const ts = Date.now();
  const className = `${name.replace(/[^A-Za-z0-9]/g, '')}${ts}`;
  const dir = path.resolve(__dirname, '..', 'src', 'database', 'migrations', type);
  const file = path.join(dir, `${ts}-${name}.ts`);
  const lines = (qs: string[]) => qs.map((s) => `    await q.query(${JSON.stringify(s)});`).join('\n');
  fs.writeFileSync(
    file,
    `import { MigrationInterface, QueryRunner } from 'typeorm';

export class ${className} implements MigrationInterface {
  name = '${className}';

  async up(q: QueryRunner): Promise<void> {
${lines(drift.up)}
  }

  async down(q: QueryRunner): Promise<void> {
${lines(drift.down)}
  }
}
`,
  );
  return file;
}

export async function runCli(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  try {
    await buildCli(env).parseAsync(argv, { from: 'user' });
    return Number(process.exitCode ?? 0);
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (err instanceof ConfigError) console.error(`configuration error: ${err.message}`);
    else if (err instanceof AppError) console.error(`error: ${err.message}`);
    else console.error(err);
    return 1;
  }
}

/** Entry point of the `trendhooks` bin. */
export function main(argv = process.argv.slice(2)): void {
  runCli(argv, process.env).then((code) => {
    // serve keeps the process alive through its listener; everything else exits with its code.
    if (code !== 0 || argv[0] !== 'serve') process.exit(code);
  });
}

if (require.main === module) main();
