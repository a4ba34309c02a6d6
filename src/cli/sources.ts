import { Command } from 'commander';
import { TrendsPoller } from '../trends/reddit/trends.poller';
import { ConfigSource, withAppContext } from './support';

/** `trendhooks sources plan`: what polling the tracked subreddits costs at their measured rates. */
export function addSourcesCommands(program: Command, config: ConfigSource): void {
  const sources = program.command('sources').description('the subreddits the poller reads from Reddit');
  sources
    .command('plan')
    .description('for the tracked subreddits and their measured post rates: the listings and re-reads per minute, the budget, and the freshness reachable')
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }) => {
      const plan = await withAppContext(config(), 'api', (ctx) => ctx.get(TrendsPoller).plan());
      const s = plan.summary;
      if (opts.json) {
        return console.log(JSON.stringify({ ...s, units: plan.units.map((u) => ({ subreddits: u.subreddits, posts_per_poll: Math.round(u.postsPerPoll * 100) / 100 })) }));
      }
      const unknown = plan.rates.filter((r) => r.postsPerHour === null).length;
      console.log(`tracked subreddits     ${s.subreddits} (${unknown} never read yet)`);
      console.log(`listings per poll      ${s.alone + s.groups}: ${s.alone} read alone, ${s.groups} multireddit groups`);
      console.log(`calls per minute       ${s.callsPerMinute} (listings ${s.listingCallsPerMinute}, re-reads ${s.rereadCallsPerMinute})`);
      console.log(`budget per minute      ${s.budgetPerMinute} (${Math.round(s.quotaShare * 1000) / 10} % of the quota used)`);
      console.log(`freshness reachable    ${Math.round(s.freshnessMs / 1000)} s`);
      if (unknown > 0) console.log(`first-read backfills   at most ${s.backfillCalls} calls once, about ${s.backfillMinutes} min of the re-read budget`);
    });
}
