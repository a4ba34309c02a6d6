import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command } from 'commander';
import { UsageError } from './support';

/** The environment variable `listen` takes webhook secrets from (one or more, separated by commas or blanks). */
export const LISTEN_SECRET_ENV = 'TRENDHOOKS_WEBHOOK_SECRET';

/** Secrets in a file or a variable: `whsec_…` values separated by newlines, commas or blanks. */
function splitSecrets(text: string): string[] {
  return text.split(/[\s,]+/).filter((s) => s !== '');
}

/**
 * The webhook secrets of `listen`, from `--secret-file` (repeatable) and TRENDHOOKS_WEBHOOK_SECRET:
 * never from the command line, which every local user can read (`ps`, /proc/PID/cmdline). A
 * `--secret` given anyway still works, with a warning. Returns the secrets and the warnings to print.
 */
export function listenSecrets(opts: { secret: string[]; secretFile: string[] }, env: Record<string, string | undefined>): { secrets: string[]; warnings: string[] } {
  const secrets: string[] = [];
  const warnings: string[] = [];
  for (const file of opts.secretFile) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new UsageError(`--secret-file ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    const found = splitSecrets(text);
    if (found.length === 0) throw new UsageError(`--secret-file ${file} holds no secret (expected whsec_… values, one a line)`);
    secrets.push(...found);
    try {
      if ((fs.statSync(file).mode & 0o077) !== 0) warnings.push(`warning: ${file} is readable by other users; chmod 600 it`);
    } catch {
      // read a moment ago; a file gone since has nothing to warn about
    }
  }
  secrets.push(...splitSecrets(env[LISTEN_SECRET_ENV] ?? ''));
  if (opts.secret.length > 0) {
    warnings.push(`warning: --secret puts the webhook secret on the command line, where every local user can read it (ps); pass it with --secret-file FILE or ${LISTEN_SECRET_ENV} instead`);
    secrets.push(...opts.secret);
  }
  return { secrets, warnings };
}

/** `trendhooks listen`: a local receiver for a developer's own webhooks (src/demo/listen.ts). */
export function addListenCommand(program: Command, env: Record<string, string | undefined>): void {
  program
    .command('listen')
    .description('run a local HTTPS receiver that verifies each delivery\'s signature and prints it (and may forward it to your app); it prints the settings trendhooks serve needs to deliver to it')
    .option('--port <port>', 'port on 127.0.0.1', '9443')
    .option('--secret-file <path>', `a file holding the webhook's secret (whsec_…, one a line for several webhooks; repeatable). Or set ${LISTEN_SECRET_ENV}`, (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--secret <whsec>', `deprecated: visible to every local user in the process list; use --secret-file or ${LISTEN_SECRET_ENV}`, (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--forward-to <url>', 'POST each verified delivery, as received, to your plain-HTTP app on this machine (e.g. http://localhost:3000/hooks)')
    .option('--count <n>', 'exit 0 after this many verified deliveries (0: run until interrupted)', '0')
    .option('--dir <path>', 'where its certificate is kept (made on first use)', 'data/listen')
    .option('--print-env', 'print the settings for trendhooks serve (export lines) and exit')
    .option('--json', 'one JSON object per delivery')
    .action(async (opts: { port: string; secret: string[]; secretFile: string[]; forwardTo?: string; count: string; dir: string; printEnv?: boolean; json?: boolean }) => {
      const port = Number(opts.port);
      if (!/^\d+$/.test(opts.port) || port < 1 || port > 65535) throw new UsageError(`--port must be from 1 to 65535, got "${opts.port}"`);
      if (!/^\d+$/.test(opts.count)) throw new UsageError(`--count must be a whole number, got "${opts.count}"`);
      const listen = await import('../demo/listen');
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
      const { secrets, warnings } = listenSecrets(opts, env);
      for (const w of warnings) console.error(w);
      await listen.runListen({
        port, dir, secrets, forwardTo, count: Number(opts.count), json: Boolean(opts.json),
        out: (line) => console.log(line), err: (line) => console.error(line),
      });
    });
}
