import { Command, Option } from 'commander';
import { plural } from '../common/plural';
import { EventsService } from '../delivery/events.service';
import { DeliveredEventFields, EVENT_KINDS, EventKind, exampleFigures, FiguresProblem, figuresProblem } from '../events/catalogue';
import { CliError, ConfigSource, UsageError, withAppContext } from './support';

/** Who fills in each field of `data` that --data may not set. */
const FILLED_BY: Record<keyof DeliveredEventFields, string> = {
  event_id: 'trendhooks (a new id per event, or --id)',
  webhook_id: 'trendhooks (each delivery carries its webhook\'s id)',
  subreddit: '--subreddit',
  test: 'trendhooks, on test events only (POST /v1/webhooks/{webhook_id}/test)',
};

function quoted(names: readonly string[]): string {
  const q = names.map((n) => JSON.stringify(n));
  return q.length === 1 ? q[0] : `${q.slice(0, -1).join(', ')} and ${q[q.length - 1]}`;
}

/** One line naming the field, e.g. `--data: trends.surge requires "count"` or `--data.count must be an integer`. */
export function describeFiguresProblem(kind: EventKind, p: FiguresProblem): string {
  switch (p.problem) {
    case 'reserved':
      return `--data.${p.field} is filled in by ${FILLED_BY[p.field]}; leave it out of --data`;
    case 'unknown':
      return `--data: ${kind} has no field ${JSON.stringify(p.field)}`;
    case 'type':
      return `--data.${p.field} must be ${p.expected}`;
    case 'missing':
      return `--data: ${kind} requires ${quoted(p.fields)} (--example fills in the documented example's)`;
  }
}

/**
 * The figures an `events emit` sends: --example's (the catalogue's example, as openapi.json shows
 * it), overlaid with --data's fields; or --data's alone. Checked against the kind's schema, so
 * nothing is emitted that a receiver validating against openapi.json would refuse.
 */
export function figuresFor(kind: EventKind, opts: { data?: string; example?: boolean }): Record<string, unknown> {
  if (opts.data === undefined && !opts.example) throw new UsageError(`the event's figures are needed: --example, or --data with every field of ${kind}'s data`);
  let data: unknown = {};
  if (opts.data !== undefined) {
    try {
      data = JSON.parse(opts.data);
    } catch {
      data = undefined;
    }
    if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new CliError('--data must be a JSON object');
  }
  const figures = { ...(opts.example ? exampleFigures(kind) : {}), ...(data as Record<string, unknown>) };
  const problem = figuresProblem(kind, figures);
  if (problem) throw new CliError(describeFiguresProblem(kind, problem));
  return figures;
}

/** `trendhooks events emit`: an event made by hand goes through the same fan-out as a detected one. */
export function addEventsCommands(program: Command, config: ConfigSource): void {
  const events = program.command('events').description('emit events as the trend pipeline would');
  events
    .command('emit')
    .description('create an event and fan it out to the subscribed webhooks (delivered by a running worker); its figures are checked against the kind\'s schema in openapi.json first')
    .addOption(new Option('--event <type>', 'the event kind').choices([...EVENT_KINDS]).makeOptionMandatory())
    .requiredOption('--subreddit <name>', 'subreddit the event is about (its data.subreddit)')
    .option('--example', "send the kind's documented example figures (openapi.json), with a new event id and the current time")
    .option(
      '--data <json>',
      "the event's figures, a JSON object: every field of the kind's data in openapi.json except event_id, webhook_id and subreddit (trendhooks fills those in); with --example, only the fields to change",
    )
    .option('--id <evt_id>', 'a deterministic event id (emitting it again is a no-op)')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
Examples:
  $ trendhooks events emit --event trends.surge --subreddit typescript --example
  $ trendhooks events emit --event trends.surge --subreddit typescript --example --data '{"count": 42, "observed": 42}'`,
    )
    .action(async (opts: { event: EventKind; subreddit: string; data?: string; example?: boolean; id?: string; json?: boolean }) => {
      const data = figuresFor(opts.event, opts);
      const res = await withAppContext(config(), 'api', (ctx) => ctx.get(EventsService).emit({ id: opts.id, type: opts.event, subreddit: opts.subreddit, data }));
      if (opts.json) return console.log(JSON.stringify(res));
      console.log(res.created ? `event ${res.event_id}: ${plural(res.deliveries, 'delivery', 'deliveries')} queued` : `event ${res.event_id} already exists; nothing queued`);
    });
}
