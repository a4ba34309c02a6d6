import 'reflect-metadata';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Command, CommanderError, Option } from 'commander';
import { DataSource } from 'typeorm';
import { migrateDatabase, serve } from './app';
import { AppModule, Role, ROLES } from './app.module';
import { ApiKeyService } from './auth/api-key.service';
import { AppError } from './common/errors';
import { EventsService } from './delivery/events.service';
import { AppConfig, ConfigError, loadConfig, PLANS } from './config/config';
import { dataSourceOptions, runMigrations, schemaDrift } from './database/data-source';
import { IngestFileError, IngestService } from './posts/ingest.service';

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

/** The whole app's modules without an HTTP listener (role `api`: no worker runs inside the CLI). */
async function withAppContext<T>(config: AppConfig, role: Role, fn: (ctx: INestApplicationContext) => Promise<T>): Promise<T> {
  await migrateDatabase(config);
  const ctx = await NestFactory.createApplicationContext(AppModule.forRoot(config, { role }), { logger: false, abortOnError: false });
  try {
    return await fn(ctx);
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
    .description('run trendhooks: the HTTP API, the delivery worker and the trend pipeline (all by default)')
    .addOption(new Option('--role <role>', 'which part runs in this process').choices([...ROLES]).default('all'))
    .action(async (opts: { role: Role }) => {
      await serve(config(), opts.role);
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
      const issued = await withAppContext(config(), 'api', (ctx) => ctx.get(ApiKeyService).issue(opts.customer, opts.plan));
      if (opts.json) return console.log(JSON.stringify(issued));
      console.log(`API key for ${issued.customer} (${issued.customer_id}, plan ${issued.plan}):\n\n  ${issued.key}\n\nIt is shown only now; trendhooks keeps only its SHA-256 hash. Revoke it with: trendhooks keys revoke ${issued.prefix}`);
    });
  keys
    .command('revoke')
    .description('revoke an API key by its prefix (the first 16 characters) or the whole key')
    .argument('<prefix>', 'key prefix, e.g. th_live_AbCd1234')
    .action(async (prefix: string) => {
      const n = await withAppContext(config(), 'api', (ctx) => ctx.get(ApiKeyService).revoke(prefix));
      if (n === 0) {
        console.error(`no active key matches ${prefix}`);
        process.exitCode = 1;
        return;
      }
      console.log(`revoked ${prefix}`);
    });

  program
    .command('ingest')
    .description('store Reddit posts from a file: a listing, a JSON array of listings, or NDJSON (streamed); prints a JSON summary')
    .requiredOption('--file <path>', 'the file to read')
    .option('--json', 'print the summary on one line (it is JSON either way)')
    .action(async (opts: { file: string; json?: boolean }) => {
      let summary;
      try {
        summary = await withAppContext(config(), 'api', (ctx) => ctx.get(IngestService).ingestFile(opts.file));
      } catch (err) {
        if (!(err instanceof IngestFileError)) throw err;
        console.error(`error: ${err.message}`);
        process.exitCode = 1;
        return;
      }
      console.log(opts.json ? JSON.stringify(summary) : JSON.stringify(summary, null, 2));
      // A run that stored nothing is almost always the wrong file; scripts should notice.
      if (summary.read - summary.skipped === 0) process.exitCode = 1;
    });

  const events = program.command('events').description('emit events as the trend pipeline would');
  events
    .command('emit')
    .description('create an event and fan it out to the subscribed webhooks (delivered by a running worker)')
    .requiredOption('--event <type>', 'trends.surge, trends.velocity or trends.rising')
    .requiredOption('--subreddit <name>', 'subreddit the event is about')
    .option('--data <json>', 'the event figures, a JSON object', '{}')
    .option('--id <evt_id>', 'a deterministic event id (emitting it again is a no-op)')
    .option('--json', 'print one JSON object')
    .action(async (opts: { event: string; subreddit: string; data: string; id?: string; json?: boolean }) => {
      let data: unknown;
      try {
        data = JSON.parse(opts.data);
      } catch {
        throw new AppError('VALIDATION_ERROR', '--data must be a JSON object');
      }
      const res = await withAppContext(config(), 'api', (ctx) =>
        ctx.get(EventsService).emit({ id: opts.id, type: opts.event, subreddit: opts.subreddit, data: data as Record<string, unknown> }),
      );
      if (opts.json) return console.log(JSON.stringify(res));
      console.log(res.created ? `event ${res.event_id}: ${res.deliveries} deliveries queued` : `event ${res.event_id} already exists; nothing queued`);
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
