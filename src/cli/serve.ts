import { Command, Option } from 'commander';
import { serve } from '../app';
import { Role, ROLES } from '../app.module';
import type { ConfigSource } from './support';

/** `trendhooks serve`: the long-running process, in one role or all. */
export function addServeCommand(program: Command, config: ConfigSource): void {
  program
    .command('serve')
    .description('run trendhooks: the HTTP API, the delivery worker and the trend pipeline (all by default)')
    .addOption(new Option('--role <role>', 'which part runs in this process').choices([...ROLES]).default('all'))
    .action(async (opts: { role: Role }) => {
      await serve(config(), opts.role);
    });
}
