import { Command } from 'commander';
import { UsageError } from './support';

/** `trendhooks demo`: the whole flow on this machine (src/demo/demo.ts). */
export function addDemoCommand(program: Command, env: Record<string, string | undefined>): void {
  program
    .command('demo')
    .description('see the whole flow locally: a generated subreddit replayed through the trend pipeline, each webhook delivery to a local HTTPS receiver verified and printed')
    .option('--json', 'one JSON object per delivery instead of a line')
    .option('--database-url <url>', 'use this database instead of a temporary SQLite file: an empty scratch one (a database holding other customers is refused; DATABASE_URL is not used)')
    .option('--timeout <seconds>', 'give up (exit 1) when not every event kind has been delivered by then', '60')
    .action(async (opts: { json?: boolean; databaseUrl?: string; timeout: string }) => {
      if (!/^\d+(\.\d+)?$/.test(opts.timeout) || Number(opts.timeout) <= 0) throw new UsageError(`--timeout must be a positive number of seconds, got "${opts.timeout}"`);
      // Loaded on use: the other commands never pay for the demo's generator and receiver.
      const { runDemo } = await import('../demo/demo');
      await runDemo(env, { json: opts.json, databaseUrl: opts.databaseUrl, timeoutMs: Number(opts.timeout) * 1000 });
    });
}
