import * as path from 'node:path';
import { Command } from 'commander';
import { UsageError } from './support';

/** `trendhooks listen`: a local receiver for a developer's own webhooks (src/demo/listen.ts). */
export function addListenCommand(program: Command): void {
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
      await listen.runListen({
        port, dir, secrets: opts.secret, forwardTo, count: Number(opts.count), json: Boolean(opts.json),
        out: (line) => console.log(line), err: (line) => console.error(line),
      });
    });
}
