import 'reflect-metadata';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Presets, SingleBar } from 'cli-progress';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { DataSource } from 'typeorm';
import { ListenError, serve } from './app';
import { AppModule, Role, ROLES } from './app.module';
import { ApiKeyService } from './auth/api-key.service';
import { PrivateDestinationsService } from './auth/private-destinations.service';
import { AppError } from './common/errors';
import { orList, plural } from './common/plural';
import { SecretBox } from './crypto/secret-box';
import { EventsService } from './delivery/events.service';
import { EVENT_KINDS } from './events/catalogue';
import { BacktestCommandOptions, runBacktestCommand } from './trends/backtest.command';
import { BACKTEST_KINDS } from './trends/detectors/backtest';
import { AppConfig, ConfigError, loadConfig, PLANS } from './config/config';
import { parsePrivateGrant } from './ssrf/ssrf-policy';
import { dataSourceOptions, runMigrations, schemaDrift } from './database/data-source';
import { generateOpenApiDocument } from './openapi/generate';
import { serialiseOpenApiDocument } from './openapi/document';
import { IngestFileError, IngestProgress, IngestService } from './posts/ingest.service';
import { CursorKeys } from './pagination/cursor-keys';
import { WebhooksService } from './webhooks/webhooks.service';

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

function packageVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/**
 * A progress bar for long ingest runs, on stderr and only when it is a terminal: stdout carries the
 * JSON summary, and logs or pipes must not fill with redraws.
 */
function progressBar(stream: NodeJS.WriteStream): { update: (p: IngestProgress) => void; stop: () => void } | undefined {
  if (!stream.isTTY) return undefined;
  const mib = (n: number) => (n / 1048576).toFixed(1);
  const bar = new SingleBar(
    { stream, format: 'ingest [{bar}] {percentage}% | {read}/{size} MiB | {records} records | ETA {eta_formatted}', hideCursor: true, clearOnComplete: true },
    Presets.shades_classic,
  );
  let started = false;
  return {
    update: (p) => {
      if (!started) {
        bar.start(Math.max(p.totalBytes, 1), 0, { read: '0.0', size: mib(p.totalBytes), records: 0 });
        started = true;
      }
      bar.update(p.bytesRead, { read: mib(p.bytesRead), records: p.records });
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}

/** A commander argument parser: a malformed value is a usage error (exit 2), the value kept as typed. */
function usageCheck(parse: (v: string) => unknown): (v: string) => string {
  return (v) => {
    try {
      parse(v);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
    return v;
  };
}

/** Exit codes: 0 done, 1 the command failed, 2 it was called wrongly (usage). */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

function readTextFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function describeDatabase(config: AppConfig): string {
  if (config.database.type === 'sqlite') return `SQLite ${config.database.path}`;
  try {
    const url = new URL(config.database.url);
    return `PostgreSQL ${url.hostname}:${url.port || 5432}${url.pathname}`; // never the password
  } catch {
    return 'PostgreSQL';
  }
}

/** Connection failures name the database and the cause, in one line. */
async function openDatabase(config: AppConfig): Promise<DataSource> {
  try {
    // dataSourceOptions creates the SQLite file's folder, which can fail too.
    const ds = new DataSource(dataSourceOptions(config.database));
    await ds.initialize();
    return ds;
  } catch (err) {
    throw new CliError(`cannot open the database (${describeDatabase(config)}): ${firstLine(err)}`);
  }
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message || err.name : String(err);
  return text.split('\n')[0].trim();
}

/** Opens the configured database, migrated, for one CLI command, and always closes it. */
async function withDataSource<T>(config: AppConfig, fn: (ds: DataSource, applied: string[]) => Promise<T>): Promise<T> {
  const ds = await openDatabase(config);
  try {
    const applied = await runMigrations(ds);
    return await fn(ds, applied);
  } finally {
    await ds.destroy();
  }
}

/** The whole app's modules without an HTTP listener (role `api`: no worker runs inside the CLI). */
async function withAppContext<T>(config: AppConfig, role: Role, fn: (ctx: INestApplicationContext) => Promise<T>): Promise<T> {
  // Migrates first (the modules may start work at once), and reports an unreachable database plainly.
  await withDataSource(config, async () => undefined);
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
    .description('Trend events from subreddits, delivered as signed webhooks. Settings come from the environment (see README).')
    // Usage errors are one `error: …` line (exit 2); `--help` on any command shows its options.
    .exitOverride()
    .version(packageVersion(), '-V, --version', 'print the version and exit');

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
      await withDataSource(cfg, async (ds, applied) => {
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
        if (opts.check) return console.log(`no drift on ${cfg.database.type}`);
        // Say what this run did: a new database gets every migration, an existing one none.
        console.log(applied.length === 0 ? `database is up to date (${describeDatabase(cfg)}); no migration applied` : `applied ${plural(applied.length, 'migration')} to ${describeDatabase(cfg)}: ${applied.join(', ')}`);
      });
    });

  const keys = program.command('keys').description('issue and revoke API keys');
  keys
    .command('create')
    .description('issue an API key (the customer is created when new); the key is printed once')
    .requiredOption('--customer <name>', 'customer name')
    .addOption(new Option('--plan <plan>', 'the customer\'s plan (an existing customer is moved to it)').choices([...PLANS]).makeOptionMandatory())
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
      if (n === 0) throw new CliError(`no active key matches ${prefix}`);
      console.log(`revoked ${prefix}`);
    });

  const customers = program.command('customers').description("a customer's private destinations (README \"Destination (SSRF) policy\")");
  const printGrants = (res: { customer: string; customer_id: string; grants: string[] }, json?: boolean) =>
    console.log(json ? JSON.stringify(res) : `${res.customer} (${res.customer_id}) may reach: ${res.grants.length ? res.grants.join(' ') : 'public destinations only'}`);
  customers
    .command('allow-private')
    .description(
      "let one customer's webhooks reach a private network (RFC 1918, loopback, unique-local…) on the given ports; no other customer gains anything. " +
        'Deliveries there keep no response excerpt, and every failure before a response is recorded as private_destination_error',
    )
    .argument('<customer>', 'customer name or cus_ id')
    .argument('<grant>', 'CIDR[:PORTS], e.g. 10.20.0.0/16:443, 10.20.0.7/32:8443,9000-9010, fd00:1::/64:* (PORTS default 443; * = any)', usageCheck(parsePrivateGrant))
    .option('--json', 'print one JSON object')
    .action(async (customer: string, grant: string, opts: { json?: boolean }) => {
      printGrants(await withAppContext(config(), 'api', (ctx) => ctx.get(PrivateDestinationsService).allow(customer, grant)), opts.json);
    });
  customers
    .command('revoke-private')
    .description("take back a customer's private destinations: one CIDR, or all; their webhooks there fail (destination_blocked) from the next attempt")
    .argument('<customer>', 'customer name or cus_ id')
    .argument('<cidr>', 'the CIDR of a grant, or "all"', usageCheck((v) => (v === 'all' ? v : parsePrivateGrant(v))))
    .option('--json', 'print one JSON object')
    .action(async (customer: string, cidr: string, opts: { json?: boolean }) => {
      const res = await withAppContext(config(), 'api', async (ctx) => {
        const svc = ctx.get(PrivateDestinationsService);
        const removed = await svc.revoke(customer, cidr);
        return { removed, ...(await svc.list(customer)) };
      });
      if (!res.removed) {
        console.error(`${res.customer} has no private grant for ${cidr}`);
        process.exitCode = 1;
      }
      printGrants(res, opts.json);
    });
  customers
    .command('show-private')
    .description("list a customer's private destinations")
    .argument('<customer>', 'customer name or cus_ id')
    .option('--json', 'print one JSON object')
    .action(async (customer: string, opts: { json?: boolean }) => {
      printGrants(await withAppContext(config(), 'api', (ctx) => ctx.get(PrivateDestinationsService).list(customer)), opts.json);
    });

  const encryption = program.command('encryption').description('encryption at rest of stored secrets (README "Secrets at rest")');
  encryption
    .command('reencrypt')
    .description(
      're-encrypt every stored secret (webhook signing secrets, the generated cursor secret) under the first key of ENCRYPTION_KEYS or the key file, ' +
        'and encrypt any still in clear; row by row, safe while trendhooks runs and safe to interrupt and repeat',
    )
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }) => {
      const res = await withAppContext(config(), 'api', async (ctx) => {
        const webhooks = await ctx.get(WebhooksService).reencryptSecrets();
        const cursorSecret = await ctx.get(CursorKeys).reencrypt();
        return { key_id: ctx.get(SecretBox).ring.primaryId, webhooks_scanned: webhooks.scanned, webhooks_reencrypted: webhooks.reencrypted, webhooks_changed_meanwhile: webhooks.skipped, cursor_secret_reencrypted: cursorSecret };
      });
      if (opts.json) console.log(JSON.stringify(res));
      else console.log(`re-encrypted ${res.webhooks_reencrypted} of ${res.webhooks_scanned} webhooks${res.cursor_secret_reencrypted ? ' and the cursor secret' : ''} under key ${res.key_id}`);
      if (res.webhooks_changed_meanwhile > 0) {
        console.error(`${res.webhooks_changed_meanwhile} webhooks kept changing while this ran; run the command again`);
        process.exitCode = 1;
      }
    });

  program
    .command('ingest')
    .description('store Reddit posts from a file: a listing, a JSON array of listings, or NDJSON (streamed); prints a JSON summary')
    .requiredOption('--file <path>', 'the file to read')
    .option('--json', 'print the summary on one line (it is JSON either way)')
    .action(async (opts: { file: string; json?: boolean }) => {
      let summary;
      const bar = progressBar(process.stderr);
      try {
        summary = await withAppContext(config(), 'api', (ctx) => ctx.get(IngestService).ingestFile(opts.file, { onProgress: bar?.update }));
      } catch (err) {
        if (!(err instanceof IngestFileError)) throw err;
        throw new CliError(err.message);
      } finally {
        bar?.stop();
      }
      console.log(opts.json ? JSON.stringify(summary) : JSON.stringify(summary, null, 2));
      // A run that stored nothing is almost always the wrong file; scripts should notice.
      if (summary.read - summary.skipped === 0) process.exitCode = 1;
    });

  program
    .command('openapi')
    .description('print the OpenAPI 3.1 document of the HTTP API, built from the code (nothing is served or connected)')
    .option('--out <file>', 'write it to this file instead of stdout')
    .option('--check <file>', 'exit 1 when this file differs from a fresh generation (CI drift check)')
    .action(async (opts: { out?: string; check?: string }) => {
      const text = serialiseOpenApiDocument(await generateOpenApiDocument());
      if (opts.check) {
        const committed = readTextFile(opts.check);
        if (committed === text) return console.log(`${opts.check} is up to date`);
        console.error(`error: ${opts.check} differs from the code's OpenAPI document; run npm run openapi and commit it`);
        process.exitCode = 1;
        return;
      }
      if (!opts.out) return void process.stdout.write(text);
      try {
        fs.writeFileSync(opts.out, text);
      } catch (err) {
        throw new CliError(`cannot write ${opts.out}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      console.log(`wrote ${opts.out}`);
    });

  const events = program.command('events').description('emit events as the trend pipeline would');
  events
    .command('emit')
    .description('create an event and fan it out to the subscribed webhooks (delivered by a running worker)')
    .requiredOption('--event <type>', orList(EVENT_KINDS))
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
      console.log(res.created ? `event ${res.event_id}: ${plural(res.deliveries, 'delivery', 'deliveries')} queued` : `event ${res.event_id} already exists; nothing queued`);
    });

  program
    .command('backtest')
    .description(`run the production ${orList(BACKTEST_KINDS)} detector over a timestamp,value CSV and print each detection at its row timestamp`)
    .addOption(new Option('--kind <kind>', 'detector').choices(BACKTEST_KINDS).makeOptionMandatory())
    .requiredOption('--series <file>', 'CSV of timestamp,value[,total] rows (ISO 8601 or unix seconds/ms; header optional)')
    .option('--json', 'one JSON object per detection: {"timestamp" (the row\'s own), "bucket_start", "value", "expected", "lift", "score"}; with --labels a last {"nab": …} line')
    .option('--bucket <duration>', 'bucket width, e.g. 5m, 30m, 1h (default: the series\' most common row spacing)')
    .option('--assumed-total <posts>', 'velocity: posts per bucket when the series has no total column (default 1000)')
    .option('--labels <file>', 'score against labelled windows (NAB standard profile): NAB windows.json keyed by file name, or a list of [start, end]')
    .option('--plot <file>', 'write an SVG of the series, the baseline and threshold band, the detections and the labelled windows')
    .action((opts: BacktestCommandOptions) => {
      runBacktestCommand(
        opts,
        (line) => console.log(line),
        (line) => console.error(line),
      );
    });

  program
    .command('demo')
    .description('see the whole flow locally: a generated subreddit replayed through the trend pipeline, each webhook delivery to a local HTTPS receiver verified and printed')
    .option('--json', 'one JSON object per delivery instead of a line')
    .option('--database-url <url>', 'use this database instead of a temporary SQLite file (a scratch one: DATABASE_URL is used too when set)')
    .option('--timeout <seconds>', 'give up (exit 1) when not every event kind has been delivered by then', '60')
    .action(async (opts: { json?: boolean; databaseUrl?: string; timeout: string }) => {
      if (!/^\d+(\.\d+)?$/.test(opts.timeout) || Number(opts.timeout) <= 0) throw new UsageError(`--timeout must be a positive number of seconds, got "${opts.timeout}"`);
      // Loaded on use: the other commands never pay for the demo's generator and receiver.
      const { runDemo } = await import('./demo/demo');
      await runDemo(env, { json: opts.json, databaseUrl: opts.databaseUrl, timeoutMs: Number(opts.timeout) * 1000 });
    });

  program
    .command('listen')
    .description('run a local HTTPS receiver that verifies each delivery\'s signature and prints it (and may forward it to your app); it prints the settings trendhooks serve needs to deliver to it')
    .option('--port <port>', 'port on 127.0.0.1', '9443')
    .option('--secret <whsec>', 'the webhook\'s secret (repeat for several webhooks)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--forward-to <url>', 'POST each verified delivery, as received, to your plain-HTTP app on this machine (e.g. http://localhost:3000/webhooks)')
    .option('--count <n>', 'exit 0 after this many verified deliveries (0: run until interrupted)', '0')
    .option('--dir <path>', 'where its certificate is kept (made on first use)', 'data/listen')
    .option('--print-env', 'print the settings for trendhooks serve (export lines) and exit')
    .option('--json', 'one JSON object per delivery')
    .action(async (opts: { port: string; secret: string[]; forwardTo?: string; count: string; dir: string; printEnv?: boolean; json?: boolean }) => {
      const port = Number(opts.port);
      if (!/^\d+$/.test(opts.port) || port < 1 || port > 65535) throw new UsageError(`--port must be from 1 to 65535, got "${opts.port}"`);
      if (!/^\d+$/.test(opts.count)) throw new UsageError(`--count must be a whole number, got "${opts.count}"`);
      const listen = await import('./demo/listen');
      let forwardTo: URL | undefined;
      try {
        forwardTo = opts.forwardTo === undefined ? undefined : listen.parseForwardTo(opts.forwardTo);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      const dir = path.resolve(opts.dir);
      if (opts.printEnv) {
        const cert = await listen.listenCertificate(dir);
        for (const line of listen.serveSettings(port, cert.caFile)) console.log(line);
        return;
      }
      await listen.runListen({
        port, dir, secrets: opts.secret, forwardTo, count: Number(opts.count), json: Boolean(opts.json),
        out: (line) => console.log(line), err: (line) => console.error(line),
      });
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
    if (err instanceof CommanderError) {
      // commander has printed the message (or the help) already. `help` and `--help` are answers,
      // not failures; help shown because no command was given is a usage error.
      const asked = ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(err.code) && err.exitCode === 0;
      return asked ? 0 : EXIT_USAGE;
    }
    console.error(`error: ${describeFailure(err)}`);
    if (debugLogging(env)) console.error(err);
    return err instanceof UsageError ? EXIT_USAGE : EXIT_FAILURE;
  }
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET', 'SQLITE_CANTOPEN']);
// PostgreSQL: invalid_authorization_specification, invalid_password, invalid_catalog_name, cannot_connect_now.
const PG_CONNECT_STATES = new Set(['28000', '28P01', '3D000', '57P03']);

/** LOG_LEVEL=debug (or trace) asks for the stack trace under the one-line error. */
function debugLogging(env: Record<string, string | undefined>): boolean {
  return /^(debug|trace)$/i.test((env.LOG_LEVEL ?? '').trim());
}

/** One line for any failure; the stack stays out of an operator's terminal. */
function describeFailure(err: unknown): string {
  if (err instanceof ConfigError) return `bad configuration: ${err.message}`;
  if (err instanceof CliError || err instanceof AppError || err instanceof ListenError) return err.message;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || PG_CONNECT_STATES.has(code))) return `cannot reach the database: ${firstLine(err)}`;
  return firstLine(err);
}

/** Entry point of the `trendhooks` bin (and of `npm start`, as `serve`). */
export function main(argv = process.argv.slice(2)): void {
  // `trendhooks demo --json | head`: a reader that went away is a normal end, not a crash.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(0);
      throw err;
    });
  }
  runCli(argv, process.env).then((code) => {
    // serve keeps the process alive through its listener; everything else exits with its code.
    if (code !== 0 || argv[0] !== 'serve') process.exit(code);
  });
}

if (require.main === module) main();
