/**
 * A backtest as a self-contained SVG: the series, the detector's expected value and the band up to
 * the value that would have fired, each detection, and any labelled windows. Pure: returns the SVG
 * text (no I/O, no fonts or scripts to load), so `trendhooks backtest --plot out.svg` needs no browser.
 *
 * A long series is drawn per pixel column: the series as its min–max range (so a one-bucket spike is
 * never averaged away), the baseline and band as the column's mean. The y axis is log(1 + value):
 * counts span decades, and a linear axis would flatten the baseline under the bursts. Detections are drawn at their
 * exact bucket, as a red tick and dot on the value that fired. A series sparser than the pixel columns
 * (a replay's posts per 30 min) is a line, broken wherever a bucket is missing; stretches given as
 * `gaps` (no data) are hatched and never drawn as zeros. The legend lists only what was drawn.
 */
import type { BacktestPoint } from './backtest';

export interface PlotWindow {
  readonly startMs: number;
  readonly endMs: number;
}

export interface PlotOptions {
  readonly title: string;
  /** Labelled windows (shaded); optional. */
  readonly windows?: readonly PlotWindow[];
  /** Unit of the y axis, e.g. "posts per 5 min". */
  readonly yLabel?: string;
  readonly width?: number;
  readonly height?: number;
  /** Events to mark at their time (a replay's deliveries), each with a short label and its kind (`trends.velocity`). */
  readonly events?: readonly PlotEvent[];
  /** What the shaded `windows` are, for the legend (default "labelled windows"). */
  readonly windowsName?: string;
  /** Labelled instants (a story's first post), marked on the time axis with their label on hover. */
  readonly marks?: readonly { readonly timeMs: number; readonly label: string }[];
  /** Stretches with no data, hatched. The caller leaves the points out of them: a missing bucket breaks the line, a zero does not. */
  readonly gaps?: readonly PlotWindow[];
}

export interface PlotEvent {
  readonly timeMs: number;
  readonly label: string;
  readonly kind?: string;
}

/** One colour per event kind, so a legend entry says which markers are which. */
const EVENT_COLORS: Readonly<Record<string, string>> = { 'trends.velocity': '#7b2cbf', 'trends.surge': '#e8590c', 'trends.rising': '#2b8a3e' };
const OTHER_EVENT_COLOR = '#555555';

const MARGIN = { left: 64, right: 16, top: 40, bottom: 64 };
const DAY_MS = 86_400_000;

export function backtestSvg(points: readonly BacktestPoint[], opts: PlotOptions): string {
  const gaps = opts.gaps ?? [];
  const width = Math.max(opts.width ?? 1600, 320);
  const height = Math.max(opts.height ?? 480, 200);
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${MARGIN.left}" y="22" font-size="15" font-weight="bold">${esc(opts.title)}</text>`,
  );
  if (points.length === 0) {
    out.push(`<text x="${width / 2}" y="${height / 2}" text-anchor="middle">no data</text></svg>`);
    return out.join('\n');
  }
  const t0 = points[0].rowTimestamp;
  const t1 = Math.max(points[points.length - 1].rowTimestamp, t0 + 1);
  // The scale follows the series and its baseline; a firing bound above them is clipped at the top.
  let yMax = 0;
  let upperMax = 0;
  for (const p of points) {
    yMax = Math.max(yMax, p.value);
    if (Number.isFinite(p.expected)) yMax = Math.max(yMax, p.expected);
    if (Number.isFinite(p.upper)) upperMax = Math.max(upperMax, p.upper);
  }
  // The firing bound is on the scale too (up to 4× the series), so on a quiet series it is a visible
  // line above the counts rather than a band clipped at the top that fills the whole chart.
  yMax = niceCeil(Math.max(yMax * 1.05, Math.min(upperMax * 1.05, 4 * Math.max(yMax, 1)), 1));
  // log(1 + v): counts span decades (a quiet night, a 40× burst); a linear axis flattens the baseline.
  const yMaxLog = Math.log1p(yMax);
  const x = (t: number) => MARGIN.left + ((t - t0) / (t1 - t0)) * plotW;
  const y = (v: number) => MARGIN.top + plotH - (Math.log1p(Math.max(0, Math.min(v, yMax))) / yMaxLog) * plotH;

  // Labelled windows under everything else.
  for (const w of opts.windows ?? []) {
    const a = Math.max(x(w.startMs), MARGIN.left);
    const b = Math.min(x(w.endMs), MARGIN.left + plotW);
    if (b <= a) continue;
    out.push(`<rect x="${f(a)}" y="${MARGIN.top}" width="${f(b - a)}" height="${plotH}" fill="#f2c200" fill-opacity="0.22"/>`);
  }

  // Stretches with no data: hatched, so a missing day never reads as a day of zeros.
  if (gaps.length > 0) {
    out.push(
      '<defs><pattern id="nodata" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="#f4f4f4"/><line x1="0" y1="0" x2="0" y2="8" stroke="#c8c8c8" stroke-width="3"/></pattern></defs>',
    );
    for (const g of gaps) {
      const a = Math.max(x(g.startMs), MARGIN.left);
      const b = Math.min(x(g.endMs), MARGIN.left + plotW);
      if (b <= a) continue;
      out.push(`<rect x="${f(a)}" y="${MARGIN.top}" width="${f(b - a)}" height="${plotH}" fill="url(#nodata)"><title>no data ${esc(span(g))}</title></rect>`);
      if (b - a > 60) out.push(`<text x="${f((a + b) / 2)}" y="${MARGIN.top + plotH / 2}" text-anchor="middle" fill="#777777">no data</text>`);
    }
  }

  // Axes and grid.
  for (const v of logTicks(yMax)) {
    const yy = y(v);
    out.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${f(yy)}" y2="${f(yy)}" stroke="#e4e4e4"/>`);
    out.push(`<text x="${MARGIN.left - 6}" y="${f(yy + 4)}" text-anchor="end">${fmtNum(v)}</text>`);
  }
  const dayStep = Math.max(1, Math.ceil((t1 - t0) / DAY_MS / 14));
  for (let d = Math.ceil(t0 / DAY_MS) * DAY_MS; d <= t1; d += dayStep * DAY_MS) {
    const xx = x(d);
    out.push(`<line x1="${f(xx)}" x2="${f(xx)}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="#eeeeee"/>`);
    out.push(`<text x="${f(xx)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle">${new Date(d).toISOString().slice(5, 10)}</text>`);
  }
  out.push(`<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#888"/>`);
  if (opts.yLabel) {
    out.push(`<text transform="translate(16 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${esc(opts.yLabel)}</text>`);
  }

  // Per-column aggregates.
  const cols = Math.max(1, Math.round(plotW));
  const colOf = (t: number) => Math.min(cols - 1, Math.floor(((t - t0) / (t1 - t0)) * cols));
  const lo = new Float64Array(cols).fill(Infinity);
  const hi = new Float64Array(cols).fill(-Infinity);
  const expSum = new Float64Array(cols);
  const upSum = new Float64Array(cols);
  const nWarm = new Float64Array(cols);
  for (const p of points) {
    const c = colOf(p.rowTimestamp);
    lo[c] = Math.min(lo[c], p.value);
    hi[c] = Math.max(hi[c], p.value);
    // A bucket no value could fire (upper Infinity) has no band: it is not "everything up to the top".
    if (Number.isFinite(p.expected) && Number.isFinite(p.upper)) {
      expSum[c] += p.expected;
      upSum[c] += p.upper;
      nWarm[c]++;
    }
  }
  const colX = (c: number) => MARGIN.left + ((c + 0.5) / cols) * plotW;

  // Threshold band: expected → value that would fire, as runs of warm columns.
  let band: string[] = [];
  let bandTop: string[] = [];
  const flushBand = () => {
    if (band.length > 0) out.push(`<polygon points="${band.join(' ')} ${bandTop.reverse().join(' ')}" fill="#3b7dd8" fill-opacity="0.16" stroke="none"/>`);
    band = [];
    bandTop = [];
  };
  for (let c = 0; c < cols; c++) {
    if (nWarm[c] === 0) {
      if (lo[c] !== Infinity) flushBand();
      continue;
    }
    band.push(`${f(colX(c))},${f(y(expSum[c] / nWarm[c]))}`);
    bandTop.push(`${f(colX(c))},${f(y(upSum[c] / nWarm[c]))}`);
  }
  flushBand();

  // Series: a line through the buckets when they are fewer than the columns (broken where one is
  // missing), else each column's min–max.
  if (points.length < cols) out.push(seriesLine(points, x, y));
  else {
    const seg: string[] = [];
    for (let c = 0; c < cols; c++) {
      if (lo[c] === Infinity) continue;
      const top = y(hi[c]);
      const bottom = Math.max(y(lo[c]), top + 0.8);
      seg.push(`M${f(colX(c))} ${f(bottom)}V${f(top)}`);
    }
    out.push(`<path d="${seg.join('')}" stroke="#333333" stroke-width="1" fill="none"/>`);
  }
  // Sparse counts (a keyword in a few buckets) are one-pixel ticks on a zero line: mark each non-zero column.
  let nonZero = 0;
  let seen = 0;
  for (let c = 0; c < cols; c++) {
    if (lo[c] === Infinity) continue;
    seen++;
    if (hi[c] > 0) nonZero++;
  }
  if (nonZero > 0 && nonZero <= 0.3 * seen) {
    const dots: string[] = [];
    for (let c = 0; c < cols; c++) if (lo[c] !== Infinity && hi[c] > 0) dots.push(`M${f(colX(c))} ${f(y(hi[c]))}h0`);
    out.push(`<path d="${dots.join('')}" stroke="#333333" stroke-width="3.5" stroke-linecap="round" fill="none"/>`);
  }

  // Baseline and firing bound as lines (runs of warm columns).
  out.push(runsPath(cols, nWarm, (c) => `${f(colX(c))} ${f(y(expSum[c] / nWarm[c]))}`, '#1f5fbf', '1.4', ''));
  out.push(runsPath(cols, nWarm, (c) => `${f(colX(c))} ${f(y(upSum[c] / nWarm[c]))}`, '#1f5fbf', '1', ' stroke-dasharray="4 3"'));

  // Detections.
  const detections = points.filter((p) => p.detected);
  let windows = 0;
  for (const p of detections) {
    const xx = x(p.rowTimestamp);
    if (p.windowStart !== undefined && p.windowStart < p.timestamp) {
      // A window detector fired on the sum of this span, not on the one bucket under the dot.
      const a = Math.max(x(p.windowStart), MARGIN.left);
      out.push(`<rect x="${f(a)}" y="${MARGIN.top + plotH - 10}" width="${f(Math.max(xx - a, 1))}" height="10" fill="#d62728" fill-opacity="0.3"/>`);
      windows++;
    }
    out.push(`<line x1="${f(xx)}" x2="${f(xx)}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH - 10}" stroke="#d62728" stroke-width="2"/>`);
    out.push(
      `<circle cx="${f(xx)}" cy="${f(y(p.value))}" r="4" fill="#d62728"><title>${esc(
        `${new Date(p.rowTimestamp).toISOString()} value ${fmtNum(p.value)} expected ${fmtNum(p.expected)} ${
          Number.isFinite(p.upper) ? `fires from ${fmtNum(p.upper)}` : 'no firing bound'
        } score ${p.score}`,
      )}</title></circle>`,
    );
  }

  const events = opts.events ?? [];
  drawEvents(out, events, points, { x, y, plotW, plotH });
  const marks = (opts.marks ?? []).filter((m) => x(m.timeMs) >= MARGIN.left && x(m.timeMs) <= MARGIN.left + plotW);
  for (const m of marks) {
    const xx = x(m.timeMs);
    const b = MARGIN.top + plotH;
    out.push(`<path d="M${f(xx)} ${f(b - 11)}l-5 10h10z" fill="#f2c200" stroke="#8a6d00" stroke-width="0.8"><title>${esc(`${new Date(m.timeMs).toISOString()} ${m.label}`)}</title></path>`);
  }

  // Legend: only what was drawn.
  const legend: [string, string][] = [];
  if (points.length > 0) legend.push(['#333333', opts.yLabel ?? 'series']);
  if (nWarm.some((n) => n > 0)) legend.push(['#1f5fbf', 'expected (baseline)'], ['#9dbbe8', 'band up to the value that fires (dashed)']);
  if (detections.length > 0) legend.push(['#d62728', `detections (${detections.length})`]);
  if (windows > 0) legend.push(['#eea9a9', 'window each detection scored (its sum, not one bucket)']);
  if ((opts.windows ?? []).length > 0) legend.push(['#f2c200', `${opts.windowsName ?? 'labelled windows'} (${opts.windows!.length})`]);
  if (marks.length > 0) legend.push(['#f2c200', `labelled stories, at their first post (${marks.length})`]);
  const kinds = [...new Set(events.map((e) => e.kind ?? 'event'))].sort();
  for (const k of kinds) {
    const n = events.filter((e) => (e.kind ?? 'event') === k).length;
    legend.push([eventColor(k), k === 'event' ? `events (${n})` : `${k.replace(/^trends\./, '')} events (${n})`]);
  }
  if (gaps.length > 0) legend.push(['url(#nodata)', `no data (${gaps.length} ${gaps.length === 1 ? 'gap' : 'gaps'})`]);
  const ly = height - 18;
  let lx = MARGIN.left;
  for (const [color, label] of legend) {
    out.push(`<rect x="${lx}" y="${ly - 9}" width="14" height="10" fill="${color}" stroke="${color.startsWith('url') ? '#999999' : 'none'}"/>`);
    out.push(`<text x="${lx + 20}" y="${ly}">${esc(label)}</text>`);
    lx += 30 + label.length * 6.6;
  }
  out.push('</svg>');
  return out.join('\n');
}

interface Frame {
  readonly x: (t: number) => number;
  readonly y: (v: number) => number;
  readonly plotW: number;
  readonly plotH: number;
}

function eventColor(kind: string | undefined): string {
  return (kind !== undefined && EVENT_COLORS[kind]) || OTHER_EVENT_COLOR;
}

/**
 * Each event: a dashed line at the time it was emitted, a triangle on the top edge and a dot on the
 * series' value at that time (the bucket it falls in), in its kind's colour; the label in the plot
 * when there is room, always on hover.
 */
function drawEvents(out: string[], events: readonly PlotEvent[], points: readonly BacktestPoint[], { x, y, plotW, plotH }: Frame): void {
  // Labels go in the first of four rows where they do not run into the previous one (widths estimated at 5.6 px a character).
  const rowEnds = [-Infinity, -Infinity, -Infinity, -Infinity];
  const right = MARGIN.left + plotW;
  for (const e of events) {
    const xx = x(e.timeMs);
    if (xx < MARGIN.left || xx > right) continue;
    const color = eventColor(e.kind);
    const title = `<title>${esc(`${new Date(e.timeMs).toISOString()} ${e.label}`)}</title>`;
    out.push(`<line x1="${f(xx)}" x2="${f(xx)}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="${color}" stroke-width="1.2" stroke-dasharray="3 2" stroke-opacity="0.7">${title}</line>`);
    out.push(`<path d="M${f(xx)} ${MARGIN.top + 9}l-6 -9h12z" fill="${color}">${title}</path>`);
    const at = valueAt(points, e.timeMs);
    if (at !== null) out.push(`<circle cx="${f(xx)}" cy="${f(y(at))}" r="5" fill="${color}" stroke="#ffffff" stroke-width="1.5">${title}</circle>`);
    const text = e.label.replace(/^trends\./, '');
    const w = text.length * 5.6;
    // Near the right edge the label ends at the line instead of starting there.
    const [a, b, anchor] = xx + 5 + w <= right ? [xx + 5, xx + 5 + w, 'start'] : [xx - 5 - w, xx - 5, 'end'];
    let row = rowEnds.findIndex((end) => end + 6 <= a);
    if (row < 0) row = rowEnds.indexOf(Math.min(...rowEnds));
    rowEnds[row] = b;
    out.push(`<text x="${f(anchor === 'start' ? a : b)}" y="${MARGIN.top + 20 + row * 13}" fill="${color}" font-size="10" text-anchor="${anchor}" stroke="#ffffff" stroke-width="3" stroke-opacity="0.85" paint-order="stroke">${esc(text)}</text>`);
  }
}

/** The value of the last point at or before t (null before the first). */
function valueAt(points: readonly BacktestPoint[], t: number): number | null {
  let lo = 0;
  let hi = points.length;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (points[m].timestamp <= t) lo = m + 1;
    else hi = m;
  }
  return lo === 0 ? null : points[lo - 1].value;
}

/** The series as a polyline, broken where consecutive points are more than 1.5 × their usual spacing apart. */
function seriesLine(points: readonly BacktestPoint[], x: (t: number) => number, y: (v: number) => number): string {
  const steps = points.slice(1).map((p, i) => p.rowTimestamp - points[i].rowTimestamp).sort((a, b) => a - b);
  const step = steps.length > 0 ? steps[steps.length >> 1] : Infinity;
  let d = '';
  points.forEach((p, i) => {
    const joined = i > 0 && p.rowTimestamp - points[i - 1].rowTimestamp <= 1.5 * step;
    d += `${joined ? 'L' : 'M'}${f(x(p.rowTimestamp))} ${f(y(p.value))}`;
    // A point with no neighbour on either side is still visible.
    const next = points[i + 1];
    if (!joined && (next === undefined || next.rowTimestamp - p.rowTimestamp > 1.5 * step)) d += 'h0.01';
  });
  return `<path d="${d}" stroke="#333333" stroke-width="1.2" fill="none" stroke-linejoin="round" stroke-linecap="round"/>`;
}

function span(w: PlotWindow): string {
  return `${new Date(w.startMs).toISOString()} – ${new Date(w.endMs).toISOString()}`;
}

function runsPath(cols: number, n: Float64Array, point: (c: number) => string, color: string, width: string, extra: string): string {
  let d = '';
  let open = false;
  for (let c = 0; c < cols; c++) {
    if (n[c] === 0) {
      open = false;
      continue;
    }
    d += `${open ? 'L' : 'M'}${point(c)}`;
    open = true;
  }
  return `<path d="${d}" stroke="${color}" stroke-width="${width}" fill="none"${extra}/>`;
}

/** 0, then 1, 2, 5 × powers of ten up to max (only powers of ten beyond three decades). */
function logTicks(max: number): number[] {
  const ticks = [0];
  const decades = Math.log10(max);
  for (let p = 1; p <= max; p *= 10) for (const m of decades > 3 ? [1] : [1, 2, 5]) if (m * p <= max) ticks.push(m * p);
  if (ticks[ticks.length - 1] < max) ticks.push(max);
  return ticks;
}

/** 1, 2, 2.5 or 5 × a power of ten, at least v. */
function niceCeil(v: number): number {
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function fmtNum(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  return Math.abs(v) >= 100 ? String(Math.round(v)) : String(Math.round(v * 10) / 10);
}

function f(v: number): string {
  return v.toFixed(1);
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
