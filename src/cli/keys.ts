import { Command, Option } from 'commander';
import { ApiKeyService } from '../auth/api-key.service';
import { PLANS } from '../auth/plans';
import { CliError, ConfigSource, withAppContext } from './support';

/** `trendhooks keys create|revoke`: API keys are issued by an operator, never over the API. */
export function addKeysCommands(program: Command, config: ConfigSource): void {
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
}
