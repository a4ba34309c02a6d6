import type { BacktestPoint } from './backtest';
import { backtestSvg } from './plot';

const T0 = Date.UTC(2024, 0, 1);
const MIN = 60_000;

function points(n: number, detectedAt: number[] = [], warmup = 10): BacktestPoint[] {
  return Array.from({ length: n }, (_, i) => ({
    timestamp: T0 + i * 5 * MIN,
    rowTimestamp: T0 + i * 5 * MIN + 173_000,
    rows: 1,
    value: detectedAt.includes(i) ? 400 : 20 + (i % 7),
    score: 0,
    expected: i < warmup ? NaN : 22,
    upper: i < warmup ? NaN : i % 50 === 0 ? Infinity : 60,
    detected: detectedAt.includes(i),
  }));
}

describe('backtestSvg', () => {
  it('draws one marker per detection, the labelled windows, the baseline and the band', () => {
    const svg = backtestSvg(points(2000, [300, 1200, 1800]), {
      title: 'a <b> & "c"',
      windows: [{ startMs: T0 + 1100 * 5 * MIN, endMs: T0 + 1300 * 5 * MIN }],
      yLabel: 'posts per 5 min',
    });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.endsWith('</svg>')).toBe(true);
    expect(svg.match(/<circle /g)).toHaveLength(3);
    expect(svg).toContain('a &lt;b&gt; &amp; &quot;c&quot;');
    expect(svg).toMatch(/fill="#f2c200" fill-opacity="0.22"/); // the window
    expect(svg).toMatch(/<polygon points="[^"]+" fill="#3b7dd8"/); // the band
    expect(svg).toContain('detections (3)');
    expect(svg).toContain('labelled windows (1)');
    expect(svg).not.toMatch(/NaN|Infinity/);
  });

  it('draws no band or baseline during warm-up, and says when there is no data', () => {
    const svg = backtestSvg(points(100, [], 100), { title: 't' });
    expect(svg).not.toContain('<polygon');
    expect(svg).not.toMatch(/NaN/);
    expect(backtestSvg([], { title: 't' })).toContain('no data');
  });

  /** The y (svg units) of the band polygon's points: its top edge is the second half. */
  function bandYs(svg: string): number[] {
    const m = /<polygon points="([^"]+)"/.exec(svg);
    return m ? m[1].split(' ').map((p) => Number(p.split(',')[1])) : [];
  }

  it('keeps a quiet series\' band a band: the firing bound is on the scale, and a bucket none could fire has none', () => {
    // ~1 post a bucket, fires from 8: the bound used to be clipped at the top, the band filling the chart.
    const quiet = Array.from({ length: 500 }, (_, i) => ({ ...points(1)[0], timestamp: T0 + i * 5 * MIN, rowTimestamp: T0 + i * 5 * MIN, value: i % 3 === 0 ? 2 : 0, expected: 0.7, upper: 8 }));
    const svg = backtestSvg(quiet, { title: 'q', height: 480 });
    const top = Math.min(...bandYs(svg));
    expect(top).toBeGreaterThan(40 + 20); // the band's top is the bound's line, below the plot's top edge (40)
    const none = backtestSvg(quiet.map((p) => ({ ...p, upper: Infinity })), { title: 'q' });
    expect(none).not.toContain('<polygon');
  });

  it('draws the window a window detector scored under each detection', () => {
    const pts = points(600, [300]).map((p, i) => (i === 300 ? { ...p, windowStart: T0 + 277 * 5 * MIN } : p));
    const svg = backtestSvg(pts, { title: 'w' });
    expect(svg).toMatch(/<rect x="[\d.]+" y="[\d.]+" width="[\d.]+" height="10" fill="#d62728" fill-opacity="0.3"\/>/);
    expect(svg).toContain('window each detection scored');
    expect(backtestSvg(points(600, [300]), { title: 'w' })).not.toContain('window each detection scored');
  });

  it('marks every non-zero bucket of a sparse series so a few small counts show', () => {
    const sparse = points(3000).map((p, i) => ({ ...p, value: i % 97 === 0 ? 3 : 0 }));
    const svg = backtestSvg(sparse, { title: 's' });
    const dots = /stroke-width="3.5" stroke-linecap="round"/.test(svg);
    expect(dots).toBe(true);
    expect(backtestSvg(points(3000), { title: 'dense' })).not.toMatch(/stroke-width="3.5"/);
  });

  it('marks and labels the events of a replay', () => {
    const svg = backtestSvg(points(600), { title: 'r', events: [{ timeMs: T0 + 100 * 5 * MIN, label: 'trends.velocity: josh + brown' }] });
    expect(svg).toContain('events (1)');
    expect(svg).toContain('velocity: josh + brown');
  });

  it('draws a replay: a line broken at a gap with no data (hatched, not zeros), a marker per event in its kind\'s colour, and a legend of only what is drawn', () => {
    const bucket = 30 * MIN;
    // 48 buckets, then two days with no data, then 48 buckets.
    const pts = [...Array.from({ length: 48 }, (_, i) => i), ...Array.from({ length: 48 }, (_, i) => 144 + i)].map((i) => ({
      ...points(1)[0],
      timestamp: T0 + i * bucket,
      rowTimestamp: T0 + i * bucket,
      value: 10 + (i % 5),
      expected: NaN,
      upper: NaN,
    }));
    const gap = { startMs: T0 + 47 * bucket + 20 * MIN, endMs: T0 + 144 * bucket + MIN };
    const svg = backtestSvg(pts, {
      title: 'replay',
      yLabel: 'posts per 30 min',
      gaps: [gap],
      events: [
        { timeMs: T0 + 10 * bucket, kind: 'trends.velocity', label: 'trends.velocity: cohen' },
        { timeMs: T0 + 150 * bucket, kind: 'trends.surge', label: 'trends.surge' },
      ],
      marks: [{ timeMs: T0 + 9 * bucket, label: 'cohen ryan' }],
    });
    // One path for the series, two runs: M…L…, then a new M after the gap (never a point at 0 inside it).
    const series = /<path d="(M[^"]+)" stroke="#333333" stroke-width="1.2"/.exec(svg)![1];
    expect(series.match(/M/g)).toHaveLength(2);
    expect(svg).toContain('fill="url(#nodata)"');
    expect(svg).toContain('no data (1 gap)');
    // Markers: a dot on the series and a triangle on the top edge per event, each kind its colour.
    expect(svg.match(/<circle [^>]*fill="#7b2cbf"/g)).toHaveLength(1);
    expect(svg.match(/<circle [^>]*fill="#e8590c"/g)).toHaveLength(1);
    expect(svg).toContain('velocity events (1)');
    expect(svg).toContain('surge events (1)');
    expect(svg).toContain('labelled stories, at their first post (1)');
    expect(svg).toContain('posts per 30 min</text>');
    // Nothing of a series backtest is in the legend when it is not drawn.
    for (const absent of ['expected (baseline)', 'band up to', 'detections (', 'labelled windows']) expect(svg).not.toContain(absent);
    expect(svg).not.toMatch(/NaN|Infinity/);
  });
});
