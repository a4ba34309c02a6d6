/**
 * Backtests: run the production detectors over a `timestamp,value` series of counts per bucket.
 *
 * surge: value = posts in the bucket.
 * velocity: value = posts containing ONE keyword in the bucket; the optional third CSV column
 * `total` = all posts in the bucket. Without it every bucket is assumed to hold `assumedTotal`
 * posts (default 1000, raised to the value if smaller): a fixed total turns the series into a share
 * series, which is what velocity scores. The keyword counts go through the same scoring and state
 * code as live posts (`observeVelocityCounts`); only tokenization is skipped.
 */
import { NabFileScore, NabWindow, scoreNabFile } from './nab';
import { resolveVelocityParams, SurgeParams, VelocityParams } from './params';
import { createSurgeState, observeSurgeBucket } from './surge';
import { binomialDeviance, createVelocityState, observeVelocityCounts, velocityBaseline } from './velocity';

export interface SeriesPoint {
  /** ms since epoch */
  readonly timestamp: number;
  readonly value: number;
  /** Velocity only: all posts in the bucket. */
  readonly total?: number;
}

export interface BacktestPoint {
  /** Bucket start on the detector's grid (ms since epoch). */
  readonly timestamp: number;
  /**
   * The series' own timestamp of the bucket: its last row's (ms since epoch). A series stamped at
   * :53 past gets 13:57:53 back, not the grid's 13:55:00; the bucket's evidence is complete then.
   */
  readonly rowTimestamp: number;
  /** Rows of the series summed into this bucket. */
  readonly rows: number;
  readonly value: number;
  /** Detector score of the bucket (0 during warm-up). */
  readonly score: number;
  /** What the detector expected in this bucket, in the value's unit (NaN during warm-up). */
  readonly expected: number;
  /** Smallest value that would have fired this bucket, cooldown aside (NaN during warm-up; Infinity when none could). */
  readonly upper: number;
  /** Whether the production detector fired on this bucket (after warm-up, cooldown and minimums). */
  readonly detected: boolean;
  /**
   * For a detection, the start of the evidence window it scored (surge: its two-hour window; velocity:
   * this bucket, or the one before for a two-bucket window): a window detector fires on a sum, not on one bucket.
   */
  readonly windowStart?: number;
}

/** What a backtest ran with: the bucket width it used and how it got it. */
export interface BacktestRun {
  readonly bucketMs: number;
  /** `given` (params.bucketMs), `inferred` (the series' spacing), or `detector minimum` (velocity's 30 min, coarser than the series). */
  readonly bucketSource: 'given' | 'inferred' | 'detector minimum';
  readonly points: BacktestPoint[];
}

export type VelocityBacktestParams = Partial<VelocityParams> & {
  /** Posts per bucket assumed when a point has no `total` (default 1000). */
  readonly assumedTotal?: number;
};

const BACKTEST_KEYWORD = 'keyword';
/** Assumed posts per bucket: at least this many… */
const MIN_ASSUMED_TOTAL = 1000;
/** …and this many times the series' median bucket: the keyword's typical share is then 1/20 = 5%. */
const ASSUMED_TOTAL_PER_MEDIAN = 20;

/**
 * Without a total column a keyword count series says nothing of the posts around it. The default
 * assumes a keyword typically in 5% of posts (20 × the median bucket, at least 1000): far above the
 * detector's 0.2% prior floor, so the floor does not decide, and a burst of up to 20× its median
 * stays a share below 1 (a fixed 1000 turned busy series' bursts into shares of 100%).
 */
function autoAssumedTotal(buckets: readonly Bucket[]): number {
  const values = buckets.map((b) => b.value).sort((a, b) => a - b);
  const median = values.length > 0 ? values[Math.floor(values.length / 2)] : 0;
  return Math.max(MIN_ASSUMED_TOTAL, Math.ceil(ASSUMED_TOTAL_PER_MEDIAN * median));
}

/** The detectors a series can be replayed through (rising needs re-reads of posts, not a series). */
export const BACKTEST_KINDS = ['surge', 'velocity'] as const;
export type BacktestKind = (typeof BACKTEST_KINDS)[number];

/**
 * Rows are sorted by time and floored to the bucket grid; rows in the same bucket are summed. The
 * bucket width is `params.bucketMs` if given, else the smallest spacing between rows (so an hourly
 * CSV is scored hourly: the "…Buckets" parameters then count hours).
 */
export function runBacktest(kind: 'surge', series: readonly SeriesPoint[], params?: Partial<SurgeParams>): BacktestPoint[];
export function runBacktest(kind: 'velocity', series: readonly SeriesPoint[], params?: VelocityBacktestParams): BacktestPoint[];
export function runBacktest(
  kind: BacktestKind,
  series: readonly SeriesPoint[],
  params?: Partial<SurgeParams> | VelocityBacktestParams,
): BacktestPoint[];
export function runBacktest(
  kind: BacktestKind,
  series: readonly SeriesPoint[],
  params: Partial<SurgeParams> | VelocityBacktestParams = {},
): BacktestPoint[] {
  return backtest(kind, series, params).points;
}

/** runBacktest, also saying which bucket width it used and whether it was given or inferred. */
export function backtest(
  kind: BacktestKind,
  series: readonly SeriesPoint[],
  params: Partial<SurgeParams> | VelocityBacktestParams = {},
): BacktestRun {
  if (!BACKTEST_KINDS.includes(kind)) throw new RangeError(`unknown backtest kind: ${String(kind)}`);
  for (const [i, pt] of series.entries()) {
    if (!Number.isFinite(pt.timestamp)) throw new RangeError(`series[${i}].timestamp must be a finite number`);
    if (!Number.isFinite(pt.value) || pt.value < 0) throw new RangeError(`series[${i}].value must be a finite number ≥ 0`);
  }
  const given = params.bucketMs;
  const inferred = inferBucketMs(series);
  // Velocity never runs finer than its production width (30 min): a keyword count per 5 minutes is
  // mostly noise, and its "…Buckets" parameters are tuned at that width. Finer rows are summed.
  const bucketMs = given ?? (kind === 'velocity' && inferred !== undefined ? Math.max(inferred, defaultBucketMs(kind)) : inferred);
  const source = given !== undefined ? 'given' : bucketMs !== undefined && bucketMs !== inferred ? 'detector minimum' : 'inferred';
  const run = (points: BacktestPoint[], width: number): BacktestRun => ({ bucketMs: width, bucketSource: source, points });
  if (series.length === 0) return run([], bucketMs ?? defaultBucketMs(kind));
  if (bucketMs === undefined) {
    // One distinct timestamp: nothing to infer from, so the detector's own default width.
    const width = defaultBucketMs(kind);
    return run(backtestKind(kind, toBuckets(series, width), { ...params, bucketMs: width }), width);
  }
  return run(backtestKind(kind, toBuckets(series, bucketMs), { ...params, bucketMs }), bucketMs);
}

function defaultBucketMs(kind: BacktestKind): number {
  return kind === 'surge' ? createSurgeState().params.bucketMs : resolveVelocityParams().bucketMs;
}

function backtestKind(kind: BacktestKind, buckets: Bucket[], params: Partial<SurgeParams> | VelocityBacktestParams): BacktestPoint[] {
  return kind === 'surge' ? backtestSurge(buckets, params as Partial<SurgeParams>) : backtestVelocity(buckets, params as VelocityBacktestParams);
}

interface Bucket {
  start: number;
  /** Latest row timestamp in the bucket. */
  row: number;
  rows: number;
  value: number;
  total: number | undefined;
}

/**
 * The bucket width a series was sampled at: the most common spacing between consecutive distinct
 * timestamps (ties: the smaller), so one early double row or a gap does not decide it. Undefined
 * with fewer than two distinct timestamps.
 */
export function inferBucketMs(series: readonly SeriesPoint[]): number | undefined {
  const ts = [...new Set(series.map((p) => p.timestamp))].sort((a, b) => a - b);
  const counts = new Map<number, number>();
  for (let i = 1; i < ts.length; i++) {
    const d = Math.round(ts[i] - ts[i - 1]);
    counts.set(d, (counts.get(d) ?? 0) + 1);
  }
  let best: number | undefined;
  let bestCount = 0;
  for (const [d, c] of counts) if (c > bestCount || (c === bestCount && best !== undefined && d < best)) [best, bestCount] = [d, c];
  return best;
}

function toBuckets(series: readonly SeriesPoint[], width: number): Bucket[] {
  const byStart = new Map<number, Bucket>();
  for (const pt of series) {
    const start = Math.floor(pt.timestamp / width) * width;
    const b = byStart.get(start);
    if (b) {
      b.value += pt.value;
      b.rows++;
      b.row = Math.max(b.row, pt.timestamp);
      b.total = b.total === undefined || pt.total === undefined ? undefined : b.total + pt.total;
    } else byStart.set(start, { start, row: pt.timestamp, rows: 1, value: pt.value, total: pt.total });
  }
  return [...byStart.values()].sort((a, b) => a.start - b.start);
}

function backtestSurge(buckets: Bucket[], params: Partial<SurgeParams>): BacktestPoint[] {
  const state = createSurgeState(withoutUndefined(params));
  return buckets.map((b) => {
    const detection = observeSurgeBucket(state, b.start, b.value);
    return {
      timestamp: b.start,
      rowTimestamp: b.row,
      rows: b.rows,
      value: b.value,
      score: round4(state.lastScore),
      expected: state.lastExpected,
      upper: state.lastUpper,
      detected: detection !== null,
      ...(detection !== null ? { windowStart: detection.bucketStart } : {}),
    };
  });
}

function backtestVelocity(buckets: Bucket[], params: VelocityBacktestParams): BacktestPoint[] {
  const { assumedTotal = autoAssumedTotal(buckets), ...velocityParams } = params;
  if (!(Number.isInteger(assumedTotal) && assumedTotal > 0)) throw new RangeError('assumedTotal must be a positive integer');
  const state = createVelocityState(withoutUndefined(velocityParams));
  return buckets.map((b) => {
    if (!Number.isInteger(b.value)) throw new RangeError(`velocity values are post counts: ${b.value} at ${b.start} is not an integer`);
    const total = b.total ?? Math.max(assumedTotal, b.value);
    if (!Number.isInteger(total) || total < b.value) {
      throw new RangeError(`total at ${b.start} must be an integer ≥ value (${b.value}), got ${total}`);
    }
    // The baseline this bucket is scored against, read before the bucket is folded in.
    const { baseShare: base, warm, dispersion } = velocityBaseline(state, BACKTEST_KEYWORD, total);
    let score = 0;
    const fired = observeVelocityCounts(state, b.start, total, new Map([[BACKTEST_KEYWORD, b.value]]), (_k, s) => {
      score = s;
    });
    return {
      timestamp: b.start,
      rowTimestamp: b.row,
      rows: b.rows,
      value: b.value,
      score: round4(score),
      expected: warm ? total * base : NaN,
      upper: warm ? velocityUpper({ ...state.params, dispersion }, total, base) : NaN,
      detected: fired.length > 0,
      ...(fired.length > 0 ? { windowStart: fired[0].bucketStart } : {}),
    };
  });
}

/**
 * Smallest count in `n` posts that velocity would fire on against baseline share `base`: at least
 * minCount and minRatio × the baseline, and a deviance score ≥ threshold (Infinity when none ≤ n can).
 */
export function velocityUpper(p: Readonly<VelocityParams>, n: number, base: number): number {
  // The same comparisons as the detector (share ≥ minRatio × base, in floating point).
  let ratioMin = Math.max(0, Math.ceil(p.minRatio * base * n) - 1);
  while (ratioMin / n < p.minRatio * base) ratioMin++;
  const lo = Math.max(p.minCount, ratioMin, Math.floor(n * base) + 1);
  const fires = (c: number) => c > n * base && Math.sqrt(binomialDeviance(c, n, base) / p.dispersion) >= p.threshold;
  if (lo > n || !fires(n)) return Infinity;
  let a = lo;
  let b = n;
  while (a < b) {
    const m = (a + b) >>> 1;
    if (fires(m)) b = m;
    else a = m + 1;
  }
  return a;
}

function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function round4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

/** A CSV row that could not be parsed; `line` is 1-based. */
export class SeriesParseError extends Error {
  constructor(
    readonly line: number,
    detail: string,
  ) {
    super(`line ${line}: ${detail}`);
    this.name = 'SeriesParseError';
  }
}

/** Unix timestamps below this are seconds (1e11 s is the year 5138; 1e11 ms is 1973). */
const SECONDS_LIMIT = 1e11;
const NUMBER_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * Parse `timestamp,value[,total]` lines. A first line whose first field has no digit is a header.
 * Timestamps: ISO 8601 (UTC unless an offset is given) or unix seconds / milliseconds (by magnitude).
 * Blank lines and lines starting with `#` are skipped; fields may be double-quoted.
 * Throws SeriesParseError naming the line of the first bad row.
 */
export function parseSeriesCsv(text: string): SeriesPoint[] {
  const out: SeriesPoint[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  let sawRow = false;
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const line = lines[i].trim();
    if (line === '' || line.startsWith('#')) continue;
    const fields = line.split(',').map(unquote);
    const first = !sawRow;
    sawRow = true;
    // A header names its columns; any timestamp has digits, so a bad one is reported, not skipped.
    if (first && !/\d/.test(fields[0])) {
      if (fields.length < 2 || fields.length > 3) {
        throw new SeriesParseError(lineNo, `header must have 2 or 3 columns (timestamp,value[,total]), got ${fields.length}`);
      }
      continue;
    }
    if (fields.length < 2 || fields.length > 3) {
      throw new SeriesParseError(lineNo, `expected 2 or 3 comma-separated fields (timestamp,value[,total]), got ${fields.length}`);
    }
    const timestamp = parseTimestamp(fields[0]);
    if (timestamp === null) {
      throw new SeriesParseError(lineNo, `timestamp "${fields[0]}" is neither ISO 8601 nor unix seconds/milliseconds`);
    }
    const value = parseCount(fields[1]);
    if (value === null) throw new SeriesParseError(lineNo, `value "${fields[1]}" is not a finite number ≥ 0`);
    if (fields.length === 3 && fields[2] !== '') {
      const total = parseCount(fields[2]);
      if (total === null) throw new SeriesParseError(lineNo, `total "${fields[2]}" is not a finite number ≥ 0`);
      if (total < value) throw new SeriesParseError(lineNo, `total ${total} is smaller than value ${value}`);
      out.push({ timestamp, value, total });
    } else out.push({ timestamp, value });
  }
  return out;
}

function unquote(f: string): string {
  const t = f.trim();
  return t.length >= 2 && t.startsWith('"') && t.endsWith('"') ? t.slice(1, -1).trim() : t;
}

function parseCount(f: string): number | null {
  if (!NUMBER_RE.test(f)) return null;
  const v = Number(f);
  return Number.isFinite(v) && v >= 0 ? v : null;
}

/** A time as series CSVs and labels write it: ISO 8601 (UTC unless an offset is given) or unix seconds/milliseconds; null when it is neither. */
export function parseTimestamp(f: string): number | null {
  if (NUMBER_RE.test(f)) {
    const n = Number(f);
    if (!Number.isFinite(n)) return null;
    // Seconds may be fractional; milliseconds are kept whole so bucket arithmetic stays exact.
    return Math.abs(n) < SECONDS_LIMIT ? Math.round(n * 1000) : Math.round(n);
  }
  const m = ISO_RE.exec(f);
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = m;
  const ms = Number((frac + '000').slice(0, 3));
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  let t = Date.UTC(Number(y), month - 1, day, Number(h), Number(mi), Number(s), ms);
  // Date.UTC rolls Feb 30 into March; a real date maps back to the same day.
  if (new Date(t).getUTCDate() !== day) return null;
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offsetMin = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0');
    if (offsetMin > 14 * 60) return null;
    t -= sign * offsetMin * 60_000;
  }
  return t;
}

/** A labels file that could not be used; the message says where. */
export class LabelsParseError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'LabelsParseError';
  }
}

/**
 * Labelled anomaly windows from JSON: NAB's `windows.json` (an object keyed by series file name,
 * each a list of `[start, end]`; the entry for `seriesName` is used), or a plain list of
 * `[start, end]` pairs or `{"start", "end"}` objects. Times as in series CSVs (ISO 8601, unix s/ms).
 */
export function parseLabelWindows(text: string, seriesName: string): NabWindow[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new LabelsParseError(`not JSON: ${(err as Error).message}`);
  }
  let list: unknown = doc;
  if (doc !== null && typeof doc === 'object' && !Array.isArray(doc)) {
    const entries = doc as Record<string, unknown>;
    if (!Object.prototype.hasOwnProperty.call(entries, seriesName)) {
      const names = Object.keys(entries);
      throw new LabelsParseError(`no windows for "${seriesName}" (the file has ${names.length === 0 ? 'no entries' : names.map((n) => `"${n}"`).join(', ')})`);
    }
    list = entries[seriesName];
  }
  if (!Array.isArray(list)) throw new LabelsParseError('expected a list of [start, end] windows');
  return list.map((w: unknown, i) => {
    const where = `window ${i + 1}`;
    const [a, b] = Array.isArray(w)
      ? w.length === 2
        ? (w as unknown[])
        : [undefined, undefined]
      : w !== null && typeof w === 'object'
        ? [(w as Record<string, unknown>).start, (w as Record<string, unknown>).end]
        : [undefined, undefined];
    const startMs = labelTime(a);
    const endMs = labelTime(b);
    if (startMs === null || endMs === null) throw new LabelsParseError(`${where}: expected [start, end] (or {"start", "end"}) with ISO 8601 or unix times`);
    if (endMs < startMs) throw new LabelsParseError(`${where}: end is before start`);
    return { startMs, endMs };
  });
}

function labelTime(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? (Math.abs(v) < SECONDS_LIMIT ? Math.round(v * 1000) : Math.round(v)) : null;
  return typeof v === 'string' ? parseTimestamp(v.trim()) : null;
}

/** A backtest scored against labelled windows (NAB standard profile). */
export interface LabelledScore extends NabFileScore {
  /** Weeks of series after NAB's probation, the span false alarms are counted over. */
  readonly scoredWeeks: number;
  /** falseAlarms / scoredWeeks. */
  readonly falseAlarmsPerWeek: number;
}

/**
 * NAB standard-profile score of a backtest: each series row is one NAB row, and a detection flags
 * its bucket's row (`rowTimestamp`). `series` are the rows the backtest ran on.
 */
export function scoreBacktest(series: readonly SeriesPoint[], points: readonly BacktestPoint[], windows: readonly NabWindow[]): LabelledScore {
  const rows = [...new Set(series.map((p) => p.timestamp))].sort((a, b) => a - b);
  const fired = new Set(points.filter((p) => p.detected).map((p) => p.rowTimestamp));
  const s = scoreNabFile(
    rows,
    rows.map((t) => fired.has(t)),
    windows,
  );
  const probation = Math.min(Math.floor(0.15 * rows.length), 750);
  const span = rows.length > probation ? rows[rows.length - 1] - rows[probation] : 0;
  const scoredWeeks = span / (7 * 86_400_000);
  return { ...s, scoredWeeks, falseAlarmsPerWeek: scoredWeeks > 0 ? s.falseAlarms / scoredWeeks : 0 };
}
