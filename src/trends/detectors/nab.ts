/**
 * The Numenta Anomaly Benchmark's windowed score, standard profile (numenta/NAB), as a pure function.
 *
 * It is the figure the surge detector is judged by on labelled real series, computed in process so
 * tuning and the quality bench need not spawn the CLI per parameter set. It reproduces, number for
 * number, the project's reference scorer that runs `trendhooks backtest --kind surge` on CSV files:
 *
 * - the first 15 % of a file's rows (at most 750) are probation and not scored;
 * - inside a labelled window only the earliest flagged row counts, weighted by how early it is:
 *   sigmoid(−(r − i + 1)/(r − l + 1)) normalised so a flag at the window's start scores ≈ 1;
 *   a window with no flag costs −1 (FN weight 1);
 * - a flag outside every window costs 0.11 × sigmoid(distance past the previous window / its
 *   length − 1), i.e. nearly −0.11 when far from any window, less just after one (and −0.11 before
 *   the first window);
 * - a file's normalised score is 100 · (raw + W) / (2W), W its scored windows; the total sums raw and
 *   W over files first. 100 = every window caught at its start with no false alarm, 0 = silence.
 */

export interface NabWindow {
  /** First instant of the window (ms since epoch, inclusive). */
  startMs: number;
  /** Last instant of the window (ms since epoch, inclusive). */
  endMs: number;
}

export interface NabFileScore {
  /** Normalised score of the file, 100 · (raw + windows) / (2 · windows) (unrounded; NaN without windows). */
  score: number;
  /** Sum of the window scores and the false-alarm costs. */
  raw: number;
  /** Labelled windows scored (those with at least one row after probation). */
  windows: number;
  /** Windows holding at least one flagged row. */
  caught: number;
  /** Flagged rows after probation outside every window. */
  falseAlarms: number;
  /** Flagged rows in all (probation included). */
  detections: number;
}

/** NAB standard profile: true positive, false positive and false negative weights. */
const COST = Object.freeze({ tp: 1.0, fp: 0.11, fn: 1.0 });
const PROBATION_FRACTION = 0.15;
/** NAB caps probation at 15 % of 5,000 rows. */
const PROBATION_CAP = PROBATION_FRACTION * 5000;

/** NAB's scaled sigmoid: +1 far before a window's end, −1 far after, capped at x > 3. */
function sigmoid(x: number): number {
  return x > 3 ? -1 : 2 / (1 + Math.exp(5 * x)) - 1;
}

/**
 * Score one file. `rowTimesMs` ascending (one per row), `flags[i]` whether the detector fired on
 * row i, `windows` the labelled anomaly windows (rows with start ≤ time ≤ end belong to one).
 */
export function scoreNabFile(rowTimesMs: readonly number[], flags: readonly boolean[], windows: readonly NabWindow[]): NabFileScore {
  if (flags.length !== rowTimesMs.length) throw new RangeError(`flags (${flags.length}) and rows (${rowTimesMs.length}) differ in length`);
  const n = rowTimesMs.length;
  const wins = windows.map((w) => [rowTimesMs.findIndex((t) => t >= w.startMs), findLastIndex(rowTimesMs, (t) => t <= w.endMs)] as const);
  const probation = Math.min(Math.floor(PROBATION_FRACTION * n), PROBATION_CAP);
  const maxTp = sigmoid(-1);
  const inWin: (number | null)[] = new Array<number | null>(n).fill(null);
  wins.forEach(([l, r], k) => {
    for (let i = Math.max(l, 0); i <= r; i++) inWin[i] = k;
  });
  let fpScore = 0;
  let falseAlarms = 0;
  const best = new Map<number, number>();
  let prevR: number | null = null;
  let prevW = 0;
  for (let i = 0; i < n; i++) {
    const k = inWin[i];
    let s: number;
    if (k !== null) {
      const [l, r] = wins[k];
      s = (sigmoid(-(r - i + 1) / (r - l + 1)) * COST.tp) / maxTp;
    } else s = (prevR === null ? -1 : sigmoid(Math.abs(prevR - i) / (prevW - 1))) * COST.fp;
    if (i >= probation) {
      if (k !== null) {
        if (!best.has(k)) best.set(k, -COST.fn);
        if (flags[i]) best.set(k, Math.max(best.get(k)!, s));
      } else if (flags[i]) {
        fpScore += s;
        falseAlarms++;
      }
    }
    if (k !== null && i === wins[k][1]) {
      prevR = wins[k][1];
      prevW = wins[k][1] - wins[k][0] + 1;
    }
  }
  let raw = fpScore;
  let caught = 0;
  for (const v of best.values()) {
    raw += v;
    if (v > -COST.fn) caught++;
  }
  const nWin = best.size;
  return { score: normalise(raw, nWin), raw, windows: nWin, caught, falseAlarms, detections: flags.filter(Boolean).length };
}

/** Summed normalised score of several files: 100 · (Σraw + ΣW) / (2 · ΣW) (unrounded; NaN without windows). */
export function nabTotal(files: readonly NabFileScore[]): number {
  let raw = 0;
  let windows = 0;
  for (const f of files) {
    raw += f.raw;
    windows += f.windows;
  }
  return normalise(raw, windows);
}

/**
 * Row flags from detection timestamps, as the reference scorer maps them: a detection flags the row
 * whose span [t, t + step) holds it, or the row starting less than one step after it (a detection
 * stamped with its bucket's start, when rows are stamped mid-bucket). `step` is the spacing of the
 * first two rows.
 */
export function nabFlags(rowTimesMs: readonly number[], detectionTimesMs: readonly number[]): boolean[] {
  const n = rowTimesMs.length;
  const flags = new Array<boolean>(n).fill(false);
  if (n === 0) return flags;
  const step = n > 1 ? rowTimesMs[1] - rowTimesMs[0] : NaN;
  const det = [...detectionTimesMs].sort((a, b) => a - b);
  let j = 0;
  for (const d of det) {
    while (j < n && rowTimesMs[j] + step <= d) j++;
    if (j < n && rowTimesMs[j] <= d + step && Math.abs(rowTimesMs[j] - d) < step) flags[j] = true;
  }
  return flags;
}

/** NaN without windows: there is nothing to normalise by (false alarms alone would read as −Infinity). */
function normalise(raw: number, windows: number): number {
  if (windows === 0) return NaN;
  return (100 * (raw + windows)) / (2 * windows);
}

function findLastIndex<T>(a: readonly T[], pred: (x: T) => boolean): number {
  for (let i = a.length - 1; i >= 0; i--) if (pred(a[i])) return i;
  return -1;
}
