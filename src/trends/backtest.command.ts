/**
 * `trendhooks backtest`: the production surge or velocity detector over a CSV series, each detection
 * printed with the series' own row timestamp, optionally scored against labelled windows (NAB
 * standard profile) and drawn as an SVG; or (`--posts`) Reddit posts replayed through the whole
 * trend pipeline, printing the events subscribers would have received. The file I/O lives here;
 * the detectors stay pure.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AppError } from '../common/errors';
import { backtest, parseLabelWindows, parseSeriesCsv, scoreBacktest } from './detectors/backtest';
import type { BacktestKind, BacktestPoint, LabelledScore, SeriesPoint } from './detectors/backtest';
import type { NabWindow } from './detectors/nab';
import { backtestSvg } from './detectors/plot';
import { EVENT_CATALOGUE, EventKind, ReceivedData } from '../events/catalogue';
import { parseRedditText, RedditPost } from '../posts/reddit-parse';
import { replayPosts } from './replay';

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
  labels?: string;
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

function readText(file: string, what: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new AppError('VALIDATION_ERROR', `cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function describeMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}

/** Runs the command; lines go to `out` (stdout) and `err` (stderr). */
export function runBacktestCommand(opts: BacktestCommandOptions, out: (line: string) => void, err: (line: string) => void): void {
  if ((opts.series === undefined) === (opts.posts === undefined)) throw new AppError('VALIDATION_ERROR', 'give exactly one of --series FILE (with --kind) or --posts FILE');
  if (opts.posts !== undefined) {
    for (const [given, name] of [
      [opts.kind, '--kind'],
      [opts.bucket, '--bucket'],
      [opts.assumedTotal, '--assumed-total'],
      [opts.labels, '--labels'],
    ] as const) {
      if (given !== undefined) throw new AppError('VALIDATION_ERROR', `${name} applies to --series only; --posts replays every detector of the pipeline`);
    }
    runPostsReplay(opts.posts, opts, out, err);
    return;
  }
  if (opts.kind === undefined) throw new AppError('VALIDATION_ERROR', '--series needs --kind surge or velocity');
  runSeriesBacktest({ ...opts, kind: opts.kind, series: opts.series! }, out, err);
}

/**
 * `--posts FILE`: the posts replayed through the trend pipeline's code path (replay.ts); prints the
 * events a subscriber would have received, at the instant the pipeline would have emitted them.
 */
function runPostsReplay(file: string, opts: BacktestCommandOptions, out: (line: string) => void, err: (line: string) => void): void {
  const parsed = parseRedditText(readText(file, 'posts'));
  if (parsed.records.length === 0) {
    const why = parsed.issues[0] ? `${parsed.issues[0].at}: ${parsed.issues[0].reason}` : 'the file is empty';
    throw new AppError('VALIDATION_ERROR', `${file}: no Reddit post could be read (${why})`);
  }
  const run = replayPosts(parsed.records.map((r) => r.post));
  const lines = run.events.map((e) => {
    const data = { event_id: e.event.id, subreddit: e.subreddit, ...e.event.data };
    const time = new Date(e.timeMs).toISOString();
    return opts.json
      ? JSON.stringify({ type: e.type, subreddit: e.subreddit, time, data })
      : `${time}  ${e.type}  r/${e.subreddit}  ${EVENT_CATALOGUE[e.type].describe(data as unknown as ReceivedData)}`;
  });
  if (opts.plot !== undefined) {
    const subreddit = Object.entries(run.posts).sort((a, b) => b[1] - a[1])[0][0];
    const posts = parsed.records.map((r) => r.post).filter((p) => p.subreddit === subreddit);
    const svg = backtestSvg(postsPerBucket(posts, POSTS_PLOT_BUCKET_MS), {
      title: `r/${subreddit} — ${path.basename(file)} replayed through the trend pipeline`,
      yLabel: `posts per ${describeMs(POSTS_PLOT_BUCKET_MS)}`,
      events: run.events
        .filter((e) => e.subreddit === subreddit)
        .map((e) => ({ timeMs: e.timeMs, label: eventLabel(e.type, e.event.data as unknown as Record<string, unknown>) })),
    });
    writePlot(opts.plot, svg);
  }
  if (!opts.json) {
    const subs = Object.entries(run.posts)
      .map(([s, n]) => `r/${s} ${n}`)
      .join(', ');
    err(`replayed ${parsed.records.length} posts (${subs}), ${parsed.issues.length} skipped; ${run.events.length} events`);
    if (opts.plot !== undefined) err(`plot written to ${opts.plot}`);
  }
  for (const line of lines) out(line);
}

const POSTS_PLOT_BUCKET_MS = 30 * 60_000;

/** Posts per bucket, every bucket from the first post to the last (the plot's series). */
function postsPerBucket(posts: readonly RedditPost[], bucketMs: number): BacktestPoint[] {
  const counts = new Map<number, number>();
  for (const p of posts) {
    const b = Math.floor(p.createdAtMs / bucketMs) * bucketMs;
    counts.set(b, (counts.get(b) ?? 0) + 1);
  }
  const starts = [...counts.keys()];
  const first = Math.min(...starts);
  const last = Math.max(...starts);
  const points: BacktestPoint[] = [];
  for (let b = first; b <= last; b += bucketMs) {
    points.push({ timestamp: b, rowTimestamp: b, rows: 1, value: counts.get(b) ?? 0, score: 0, expected: NaN, upper: NaN, detected: false });
  }
  return points;
}

function eventLabel(type: EventKind, data: Record<string, unknown>): string {
  if (Array.isArray(data.keywords)) return `${type}: ${(data.keywords as string[]).join(' + ')}`;
  return type;
}

function writePlot(file: string, svg: string): void {
  try {
    fs.writeFileSync(file, svg);
  } catch (e) {
    throw new AppError('VALIDATION_ERROR', `cannot write plot ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
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
  if (opts.labels !== undefined) {
    try {
      windows = parseLabelWindows(readText(opts.labels, 'labels'), path.basename(opts.series));
    } catch (e) {
      if (e instanceof AppError) throw e;
      throw new AppError('VALIDATION_ERROR', `${opts.labels}: ${(e as Error).message}`);
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
