import 'reflect-metadata';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError } from 'commander';
import { loadConfig } from './config/config';
import { FEATURE_NAMES } from './database/features';
import { addBacktestCommand } from './cli/backtest';
import { addCustomersCommands } from './cli/customers';
import { addDemoCommand } from './cli/demo';
import { addEncryptionCommands } from './cli/encryption';
import { addEventsCommands } from './cli/events';
import { addSourcesCommands } from './cli/sources';
import { addIngestCommand } from './cli/ingest';
import { addKeysCommands } from './cli/keys';
import { addListenCommand } from './cli/listen';
import { addMigrateCommand } from './cli/migrate';
import { addOpenApiCommand } from './cli/openapi';
import { addPortalCommands } from './cli/portal';
import { addServeCommand } from './cli/serve';
import { describeFailure, UsageError } from './cli/support';

function packageVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** Exit codes: 0 done, 1 the command failed, 2 it was called wrongly (usage). */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** The `trendhooks` program: one file per command under cli/, added here in the order `--help` lists them. */
export function buildCli(env: Record<string, string | undefined>): Command {
  const program = new Command('trendhooks')
    .description('Trend events from subreddits, delivered as signed webhooks. Settings come from the environment (see README).')
    // Usage errors are one `error: …` line (exit 2); `--help` on any command shows its options.
    .exitOverride()
    .version(packageVersion(), '-V, --version', 'print the version and exit')
    // A host app's database (README "Using the modules in your own Nest app"); taken before or after the command.
    .option('--migrations-table <name>', "a host's database: trendhooks' migrations are the per-feature ones, recorded in this table of the host's (TRENDHOOKS_MIGRATIONS_TABLE)")
    .option('--features <list>', `with --migrations-table: the features that database has, from ${FEATURE_NAMES.join(',')} (TRENDHOOKS_FEATURES; default all)`);
  const config = () => {
    const o = program.opts<{ migrationsTable?: string; features?: string }>();
    return loadConfig({
      ...env,
      ...(o.migrationsTable !== undefined ? { TRENDHOOKS_MIGRATIONS_TABLE: o.migrationsTable } : {}),
      ...(o.features !== undefined ? { TRENDHOOKS_FEATURES: o.features } : {}),
    });
  };
  // Each adds through program.command(), so the subcommands inherit exitOverride and the output settings.
  addServeCommand(program, config);
  addMigrateCommand(program, config);
  addKeysCommands(program, config);
  addCustomersCommands(program, config);
  addPortalCommands(program, config);
  addEncryptionCommands(program, config);
  addIngestCommand(program, config);
  addOpenApiCommand(program);
  addEventsCommands(program, config);
  addSourcesCommands(program, config);
  addBacktestCommand(program);
  addDemoCommand(program, env);
  addListenCommand(program, env);
  return program;
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

/** LOG_LEVEL=debug (or trace) asks for the stack trace under the one-line error. */
function debugLogging(env: Record<string, string | undefined>): boolean {
  return /^(debug|trace)$/i.test((env.LOG_LEVEL ?? '').trim());
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
