import fc from 'fast-check';
import { parseSeriesCsv, runBacktest, SeriesParseError, SeriesPoint } from './backtest';
import { DEFAULT_SURGE_PARAMS, DEFAULT_VELOCITY_PARAMS } from './params';
import { mulberry32 as rng } from '../../common/prng';

const T0 = Date.UTC(2024, 0, 1);


function poisson(r: () => number, mean: number): number {
  const l = Math.exp(-mean);
  let k = 0;
  let p = r();
  while (p > l) {
    k++;
    p *= r();
  }
  return k;
}

describe('parseSeriesCsv', () => {
  it('parses unix seconds, milliseconds and ISO 8601, with or without a header', () => {
    const text = ['timestamp,value', '1704067200,3', '1704067500000,4', '2024-01-01T00:10:00Z,5', '2024-01-01 00:15,6', '2024-01-01T02:20:00+02:00,7'].join('\n');
    expect(parseSeriesCsv(text)).toEqual([
      { timestamp: T0, value: 3 },
      { timestamp: T0 + 300_000, value: 4 },
      { timestamp: T0 + 600_000, value: 5 },
      { timestamp: T0 + 900_000, value: 6 },
      { timestamp: T0 + 1_200_000, value: 7 },
    ]);
    expect(parseSeriesCsv('1704067200,3\n')).toEqual([{ timestamp: T0, value: 3 }]);
  });

  it('accepts CRLF, blank lines, comments, quotes, a BOM and an optional total column', () => {
    const text = '\uFEFF"timestamp","value","total"\r\n# comment\r\n\r\n"1704067200", 2 ,100\r\n1704067500,0,\r\n';
    expect(parseSeriesCsv(text)).toEqual([
      { timestamp: T0, value: 2, total: 100 },
      { timestamp: T0 + 300_000, value: 0 },
    ]);
  });

  it('names the line of a bad row', () => {
    const cases: [string, RegExp][] = [
      ['timestamp,value\n1704067200,3\n1704067500,abc', /^line 3: value "abc"/],
      ['1704067200,3\nyesterday,4', /^line 2: timestamp "yesterday"/],
      ['1704067200', /^line 1: expected 2 or 3/],
      ['1704067200,3,4,5', /^line 1: expected 2 or 3/],
      ['1704067200,-1', /^line 1: value "-1"/],
      ['2024-02-30T00:00:00Z,1', /^line 1: timestamp/],
      ['2024-13-01,1', /^line 1: timestamp/],
      ['1704067200,5,4', /^line 1: total 4 is smaller than value 5/],
      ['ts,value\n\n\n1704067200,1\n1704067500,x', /^line 5: /],
    ];
    for (const [text, message] of cases) {
      let err: unknown;
      try {
        parseSeriesCsv(text);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(SeriesParseError);
      expect((err as Error).message).toMatch(message);
    }
  });

  it('round-trips any series written as unix milliseconds', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ timestamp: fc.integer({ min: 1e11, max: 4e12 }), value: fc.nat({ max: 1e6 }) }), { maxLength: 50 }),
        (rows) => {
          const text = rows.map((r) => `${r.timestamp},${r.value}`).join('\n');
          expect(parseSeriesCsv(text)).toEqual(rows);
        },
      ),
    );
  });
});

describe('runBacktest', () => {
  const series = (): SeriesPoint[] => {
    const r = rng(3);
    // A surge: 4× for an hour from bucket 500 (a one-bucket blip is noise to the surge detector).
    return Array.from({ length: 600 }, (_, i) => ({ timestamp: T0 + i * DEFAULT_SURGE_PARAMS.bucketMs, value: poisson(r, i >= 500 && i < 512 ? 60 : 15) }));
  };
  const fired = (out: { detected: boolean }[]) => out.flatMap((p, i) => (p.detected ? [i] : []));

  it('surge: one row per bucket, the burst flagged with a high score', () => {
    const out = runBacktest('surge', series());
    expect(out).toHaveLength(600);
    const hits = fired(out);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toBeGreaterThanOrEqual(500);
    expect(hits[0]).toBeLessThan(512);
    expect(out[hits[0]].timestamp).toBe(T0 + hits[0] * DEFAULT_SURGE_PARAMS.bucketMs);
    expect(out[hits[0]].score).toBeGreaterThanOrEqual(DEFAULT_SURGE_PARAMS.threshold);
    expect(out[10].score).toBe(0); // warm-up
    expect(Math.max(...out.slice(100, 499).map((p) => p.score))).toBeLessThan(DEFAULT_SURGE_PARAMS.threshold);
  });

  it('surge: infers the bucket width from the series and sorts rows', () => {
    const hourly = series().map((p, i) => ({ timestamp: T0 + i * 3_600_000, value: p.value }));
    const out = runBacktest('surge', [...hourly].reverse());
    expect(out.map((p) => p.timestamp)).toEqual(hourly.map((p) => p.timestamp));
    expect(fired(out)).toEqual(fired(runBacktest('surge', series())));
  });

  it('velocity: a keyword count series against a fixed or given total', () => {
    const r = rng(4);
    const rows = Array.from({ length: 100 }, (_, i) => ({ timestamp: T0 + i * DEFAULT_VELOCITY_PARAMS.bucketMs, value: i === 90 ? 60 : poisson(r, 10) }));
    const fixed = runBacktest('velocity', rows);
    expect(fixed.filter((p) => p.detected).map((p) => p.timestamp)).toEqual([rows[90].timestamp]);
    // With totals that rise as much as the keyword, the share is flat: nothing to flag.
    const withTotal = rows.map((p, i) => ({ ...p, total: i === 90 ? 6000 : 1000 }));
    expect(runBacktest('velocity', withTotal).filter((p) => p.detected)).toEqual([]);
  });

  it('rejects bad input', () => {
    expect(() => runBacktest('velocity', [{ timestamp: T0, value: 1.5 }])).toThrow(/integer/);
    expect(() => runBacktest('surge', [{ timestamp: T0, value: -1 }])).toThrow(RangeError);
    expect(() => runBacktest('nope' as 'surge', [])).toThrow(/unknown/);
    expect(runBacktest('surge', [])).toEqual([]);
  });
});
