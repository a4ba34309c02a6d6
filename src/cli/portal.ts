import { Command } from 'commander';
import { ApiKeyStore } from '../auth/api-key.store';
import { looksLikeCustomerId } from '../auth/customer.entity';
import { PlanService } from '../auth/plan.service';
import type { Plan } from '../auth/plans';
import { PortalSessionsService } from '../portal/portal-sessions.service';
import { WebhooksService } from '../webhooks/webhooks.service';
import { CliError, ConfigSource, withAppContext } from './support';

/**
 * `trendhooks portal link`: the operator's way to hand a customer a portal link (the API's POST
 * /v1/portal/sessions); `portal revoke`: the way to take every one of them back.
 */
export function addPortalCommands(program: Command, config: ConfigSource): void {
  const portal = program.command('portal').description('the customer portal (docs/portal.md)');
  portal
    .command('link')
    .description("mint a single-use link (PORTAL_LINK_TTL_SECONDS, default 1 h) to a customer's portal, or to one of its webhooks")
    .requiredOption('--customer <name>', 'customer name or cus_ id')
    .option('--webhook <id>', "scope the link to this webhook of the customer's")
    .option('--json', 'print one JSON object')
    .action(async (opts: { customer: string; webhook?: string; json?: boolean }) => {
      const c = config();
      const base = c.portal.baseUrl ?? `http://localhost:${c.http.port}`;
      const link = await withAppContext(c, 'api', async (ctx) => {
        const row = await findCustomer(ctx.get(ApiKeyStore, { strict: false }), opts.customer);
        const plan = row.plan as Plan;
        if (!ctx.get(PlanService, { strict: false }).limits(plan).businessPlus) throw new CliError(`the portal needs the Business plan or above; ${row.name} is on ${plan}`);
        const principal = { tenantId: row.id, plan };
        const webhook = opts.webhook === undefined ? null : await ctx.get(WebhooksService, { strict: false }).get(principal, opts.webhook);
        return { customer: row.name, customer_id: row.id, webhook_id: webhook?.id ?? null, ...(await ctx.get(PortalSessionsService, { strict: false }).mint(principal, webhook?.id ?? null, base)) };
      });
      console.log(opts.json ? JSON.stringify(link) : `${link.url}\n(single use, expires ${link.expires_at})`);
    });
  portal
    .command('revoke')
    .description("end every portal session and unused link of a customer now (its API keys stay valid)")
    .requiredOption('--customer <name>', 'customer name or cus_ id')
    .option('--json', 'print one JSON object')
    .action(async (opts: { customer: string; json?: boolean }) => {
      const ended = await withAppContext(config(), 'api', async (ctx) => {
        const row = await findCustomer(ctx.get(ApiKeyStore, { strict: false }), opts.customer);
        return { customer: row.name, customer_id: row.id, ...(await ctx.get(PortalSessionsService, { strict: false }).revokeCustomer(row.id)) };
      });
      console.log(opts.json ? JSON.stringify(ended) : `ended ${ended.sessions} portal session(s) and ${ended.links} unused link(s) of ${ended.customer} (${ended.customer_id})`);
    });
}

/** The customer named by `nameOrId` (a name, or a `cus_` id), or the CLI's error. */
async function findCustomer(store: ApiKeyStore, nameOrId: string) {
  const byId = looksLikeCustomerId(nameOrId);
  const row = byId ? await store.findCustomerById(nameOrId) : await store.findCustomerByName(nameOrId);
  if (!row) throw new CliError(`no customer ${byId ? 'with id' : 'named'} ${nameOrId}`);
  return row;
}
