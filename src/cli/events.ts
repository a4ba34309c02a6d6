import { Command } from 'commander';
import { AppError } from '../common/errors';
import { orList, plural } from '../common/plural';
import { EventsService } from '../delivery/events.service';
import { EVENT_KINDS } from '../events/catalogue';
import { ConfigSource, withAppContext } from './support';

/** `trendhooks events emit`: an event made by hand goes through the same fan-out as a detected one. */
export function addEventsCommands(program: Command, config: ConfigSource): void {
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
}
