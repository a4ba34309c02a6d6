import { Presets, SingleBar } from 'cli-progress';
import { Command } from 'commander';
import { IngestFileError, IngestProgress, IngestService } from '../posts/ingest.service';
import { CliError, ConfigSource, withAppContext } from './support';

/**
 * A progress bar for long ingest runs, on stderr and only when it is a terminal: stdout carries the
 * JSON summary, and logs or pipes must not fill with redraws.
 */
function progressBar(stream: NodeJS.WriteStream): { update: (p: IngestProgress) => void; stop: () => void } | undefined {
  if (!stream.isTTY) return undefined;
  const mib = (n: number) => (n / 1048576).toFixed(1);
  const bar = new SingleBar(
    { stream, format: 'ingest [{bar}] {percentage}% | {read}/{size} MiB | {records} records | ETA {eta_formatted}', hideCursor: true, clearOnComplete: true },
    Presets.shades_classic,
  );
  let started = false;
  return {
    update: (p) => {
      if (!started) {
        bar.start(Math.max(p.totalBytes, 1), 0, { read: '0.0', size: mib(p.totalBytes), records: 0 });
        started = true;
      }
      bar.update(p.bytesRead, { read: mib(p.bytesRead), records: p.records });
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}

/** `trendhooks ingest --file`: posts from a dump, through the same parser as the poller's. */
export function addIngestCommand(program: Command, config: ConfigSource): void {
  program
    .command('ingest')
    .description('store Reddit posts from a file: a listing, a JSON array of listings, or NDJSON (streamed); prints a JSON summary')
    .requiredOption('--file <path>', 'the file to read')
    .option('--json', 'print the summary on one line (it is JSON either way)')
    .action(async (opts: { file: string; json?: boolean }) => {
      let summary;
      const bar = progressBar(process.stderr);
      try {
        summary = await withAppContext(config(), 'api', (ctx) => ctx.get(IngestService).ingestFile(opts.file, { onProgress: bar?.update }));
      } catch (err) {
        if (!(err instanceof IngestFileError)) throw err;
        throw new CliError(err.message);
      } finally {
        bar?.stop();
      }
      console.log(opts.json ? JSON.stringify(summary) : JSON.stringify(summary, null, 2));
      // A run that stored nothing is almost always the wrong file; scripts should notice.
      if (summary.read - summary.skipped === 0) process.exitCode = 1;
    });
}
