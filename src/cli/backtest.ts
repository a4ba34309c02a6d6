import { Command, Option } from 'commander';
import { orList } from '../common/plural';
import { BacktestCommandOptions, runBacktestCommand } from '../trends/backtest.command';
import { BACKTEST_KINDS } from '../trends/detectors/backtest';

/** `trendhooks backtest`: the options; the run itself is the trends module's (src/trends/backtest.command.ts). */
export function addBacktestCommand(program: Command): void {
  program
    .command('backtest')
    .description(
      `run the production ${orList(BACKTEST_KINDS)} detector over a timestamp,value CSV and print each detection at its row timestamp; ` +
        'or replay Reddit posts through the whole trend pipeline and print the events subscribers would have received, each with its delay, ' +
        'optionally scored against labelled surges and stories, then a one-line summary',
    )
    .addOption(new Option('--kind <kind>', 'detector (with --series)').choices(BACKTEST_KINDS))
    .option('--series <file>', 'CSV of timestamp,value[,total] rows (ISO 8601 or unix seconds/ms; header optional)')
    .option(
      '--posts <file>',
      'Reddit posts (a listing, a JSON array of listings, or NDJSON: what ingest reads) fed in event time to every detector as the pipeline would; prints each event at the time it would have been emitted ' +
        "and its delay after its onset (velocity: first_post_at, else the story's first post in the file; surge: window_start), then a last line \"summary: …\" (events per kind and per day, median delays, label scores)",
    )
    .option(
      '--json',
      'one JSON object per detection: {"timestamp" (the row\'s own), "bucket_start", "value", "expected", "lift", "score"}; with --labels a last {"nab": …} line. ' +
        'With --posts: per event {"type", "subreddit", "time" (when the pipeline would have emitted it), "onset", "onset_from", "delay_min", ["false_alarm",] "data" (the delivered data, without webhook_id)}; ' +
        'with --labels one {"label": …} line per label; last a {"summary": …} line. Only event lines have a "type"',
    )
    .option('--bucket <duration>', 'bucket width, e.g. 5m, 30m, 1h (default: the series\' most common row spacing)')
    .option('--assumed-total <posts>', 'velocity: posts per bucket when the series has no total column (default 1000)')
    .option(
      '--labels <file>',
      'with --series: score against labelled windows (NAB standard profile): NAB windows.json keyed by file name, or a list of [start, end]. ' +
        'With --posts (repeatable): {"surges": [{"start", "end", "note"?}], "stories": [{"first_post_at", "words": [...], "note"?}]}; prints each label caught or missed with its delay, and false alarms per day',
      (file: string, prev: string[] | undefined) => [...(prev ?? []), file],
    )
    .option('--plot <file>', 'write an SVG of the series, the baseline and threshold band, the detections and the labelled windows (with --posts: the busiest subreddit\'s posts per 30 min, stretches with no post for 60 times the usual spacing (at least 30 min) hatched as no data, each event marked by kind, labelled surges and stories)')
    .action((opts: BacktestCommandOptions) => {
      runBacktestCommand(
        opts,
        (line) => console.log(line),
        (line) => console.error(line),
      );
    });
}
