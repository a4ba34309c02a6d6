/**
 * `trendhooks backtest`: the production surge or velocity detector over a CSV series, each detection
 * printed with the series' own row timestamp, optionally scored against labelled windows (NAB
 * standard profile) and drawn as an SVG; or (`--posts`) Reddit posts replayed through the whole
 * trend pipeline, printing the events subscribers would have received, each with its delay, scored
 * against the lab's labels when given, and a summary line (replay.command.ts). The file I/O lives
 * here; the detectors stay pure.
 */
import * as path from 'node:path';
import { AppError } from '../common/errors';
import { backtest, parseLabelWindows, parseSeriesCsv, scoreBacktest } from './detectors/backtest';
import type { BacktestKind, BacktestPoint, LabelledScore, SeriesPoint } from './detectors/backtest';
import { describeMs, readText, writePlot } from './command-files';
import type { NabWindow } from './detectors/nab';
import { backtestSvg } from './detectors/plot';
import { runPostsReplay } from './replay.command';

export interface BacktestCommandOptions {
  /** With --series: the detector to run. */
  kind?: BacktestKind;
  series?: string;
  /** Reddit posts (the files `ingest` reads) replayed through the whole trend pipeline. */
  posts?: string;
  json?: boolean;
  /** Bucket width as text (`5m`, `30m`, `1h`, `300s`, `300000ms`); inferred from the series when absent. */
  bucket?: string;
  /** Velocity: posts per bucket assumed when the series has no total column. */
  assumedTotal?: string;
  /**
   * Labels: with --series one NAB windows file; with --posts one or more files in the lab's format
   * (`{"surges": [{start, end}], "stories": [{first_post_at, words}]}`), merged.
   */
  labels?: string[];
  plot?: string;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000 };

/** `5m` → 300000. Throws AppError VALIDATION_ERROR naming the option. */
export function parseBucket(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|min|m|h)\s*$/i.exec(text);
  const ms = m ? Number(m[1]) * UNIT_MS[m[2].toLowerCase()] : NaN;
  if (!Number.isInteger(ms) || ms <= 0) {
    throw new AppError('VALIDATION_ERROR', `--bucket must be a positive duration in whole milliseconds such as 5m, 30m, 1h or 300s, got "${text}"`);
  }
  return ms;
}

/** Runs the command; lines go to `out` (stdout) and `err` (stderr). */
export function runBacktestCommand(opts: BacktestCommandOptions, out: (line: string) => void, err: (line: string) => void): void {
  if ((opts.series === undefined) === (opts.posts === undefined)) throw new AppError('VALIDATION_ERROR', 'give exactly one of --series FILE (with --kind) or --posts FILE');
  if (opts.posts !== undefined) {
    for (const [given, name] of [
      [opts.kind, '--kind'],
      [opts.bucket, '--bucket'],
      [opts.assumedTotal, '--assumed-total'],
    ] as const) {
      if (given !== undefined) throw new AppError('VALIDATION_ERROR', `${name} applies to --series only; --posts replays every detector of the pipeline`);
    }
    runPostsReplay(opts.posts, opts, out, err);
    return;
  }
  if ((opts.labels?.length ?? 0) > 1) throw new AppError('VALIDATION_ERROR', '--series takes one --labels file (NAB windows); several go with --posts');
  if (opts.kind === undefined) throw new AppError('VALIDATION_ERROR', '--series needs --kind surge or velocity');
  runSeriesBacktest({ ...opts, kind: opts.kind, series: opts.series! }, out, err);
}

function runSeriesBacktest(opts: BacktestCommandOptions & { kind: BacktestKind; series: string }, out: (line: string) => void, err: (line: string) => void): void {
  const bucketMs = opts.bucket === undefined ? undefined : parseBucket(opts.bucket);
  let assumedTotal: number | undefined;
  if (opts.assumedTotal !== undefined) {
    if (opts.kind !== 'velocity') throw new AppError('VALIDATION_ERROR', '--assumed-total applies to --kind velocity only');
    assumedTotal = Number(opts.assumedTotal);
    if (!/^\d+$/.test(opts.assumedTotal.trim()) || !Number.isSafeInteger(assumedTotal) || assumedTotal <= 0) {
      throw new AppError('VALIDATION_ERROR', `--assumed-total must be a positive integer, got "${opts.assumedTotal}"`);
    }
  }
  const text = readText(opts.series, 'series');
  let series: SeriesPoint[];
  let points: BacktestPoint[];
  let usedBucketMs: number;
  let bucketSource: string;
  try {
    series = parseSeriesCsv(text);
    const run = backtest(opts.kind, series, opts.kind === 'velocity' ? { bucketMs, assumedTotal } : { bucketMs });
    points = run.points;
    usedBucketMs = run.bucketMs;
    bucketSource = run.bucketSource;
  } catch (e) {
    throw new AppError('VALIDATION_ERROR', `${opts.series}: ${(e as Error).message}`);
  }
  let windows: NabWindow[] | undefined;
  const labelsFile = opts.labels?.[0];
  if (labelsFile !== undefined) {
    try {
      windows = parseLabelWindows(readText(labelsFile, 'labels'), path.basename(opts.series));
    } catch (e) {
      if (e instanceof AppError) throw e;
      throw new AppError('VALIDATION_ERROR', `${labelsFile}: ${(e as Error).message}`);
    }
  }

  // Everything that can fail happens before anything is printed: a failure is one error line.
  const lines: string[] = [];
  for (const p of points.filter((x) => x.detected)) {
    const ts = new Date(p.rowTimestamp).toISOString();
    const bucketStart = new Date(p.timestamp).toISOString();
    const expected = round(p.expected);
    lines.push(
      opts.json
        ? JSON.stringify({ timestamp: ts, bucket_start: bucketStart, value: p.value, expected, lift: round(p.value / Math.max(p.expected, 1e-3)), score: p.score })
        : `${ts}  value=${p.value}  expected=${expected}  score=${p.score}`,
    );
  }
  if (windows !== undefined) {
    const s = scoreBacktest(series, points, windows);
    lines.push(opts.json ? JSON.stringify({ nab: nabSummary(s) }) : nabLine(s));
  }
  if (opts.plot !== undefined) {
    const svg = backtestSvg(points, {
      title: `${path.basename(opts.series)} — trends.${opts.kind} backtest, ${describeMs(usedBucketMs)} buckets`,
      windows,
      yLabel: opts.kind === 'surge' ? `count per ${describeMs(usedBucketMs)}` : `keyword count per ${describeMs(usedBucketMs)}`,
    });
    writePlot(opts.plot, svg);
  }
  if (!opts.json) {
    err(`${opts.kind} backtest of ${series.length} rows in ${points.length} buckets of ${describeMs(usedBucketMs)} (${bucketSource})`);
    if (opts.plot !== undefined) err(`plot written to ${opts.plot}`);
  }
  for (const line of lines) out(line);
}

function nabSummary(s: LabelledScore): Record<string, number | null> {
  return {
    score: round(s.score),
    windows: s.windows,
    caught: s.caught,
    false_alarms: s.falseAlarms,
    false_alarms_per_week: round(s.falseAlarmsPerWeek),
    detections: s.detections,
  };
}

function nabLine(s: LabelledScore): string {
  return (
    `NAB standard profile: score ${Number.isFinite(s.score) ? s.score.toFixed(1) : 'n/a (no labelled windows after probation)'}, ` +
    `windows caught ${s.caught}/${s.windows}, false alarms ${s.falseAlarms} (${s.falseAlarmsPerWeek.toFixed(2)} per week), detections ${s.detections}`
  );
}

function round(x: number): number | null {
  return Number.isFinite(x) ? Math.round(x * 1000) / 1000 : null;
}
