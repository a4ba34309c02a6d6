import { Command } from 'commander';
import { PrivateDestinationsService } from '../auth/private-destinations.service';
import { parsePrivateGrant } from '../ssrf/ssrf-policy';
import { ConfigSource, usageCheck, withAppContext } from './support';

/** `trendhooks customers …-private`: private destinations are granted per customer by an operator only. */
export function addCustomersCommands(program: Command, config: ConfigSource): void {
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
}
