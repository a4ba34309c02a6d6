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
});
