import fc from 'fast-check';
import { backtest, inferBucketMs, LabelsParseError, parseLabelWindows, parseSeriesCsv, runBacktest, scoreBacktest, SeriesParseError, SeriesPoint, velocityUpper } from './backtest';
import { binomialDeviance } from './velocity';
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

describe('backtest: what a user expects back', () => {
  const MIN = 60_000;
  // Rows stamped 2 min 53 s past the 5-minute grid, as NAB's realTweets series are.
  const offset = (2 * 60 + 53) * 1000;
  const rows = (): SeriesPoint[] => {
    const r = rng(11);
    return Array.from({ length: 600 }, (_, i) => ({ timestamp: T0 + offset + i * 5 * MIN, value: poisson(r, i >= 500 && i < 530 ? 150 : 15) }));
  };

  it("reports each bucket at the series' own row timestamp, not the grid's bucket start", () => {
    const out = runBacktest('surge', rows());
    const hit = out.find((p) => p.detected)!;
    expect(hit).toBeDefined();
    expect((hit.rowTimestamp - T0) % (5 * MIN)).toBe(offset);
    expect(hit.timestamp).toBe(hit.rowTimestamp - offset);
    expect(out.map((p) => p.rowTimestamp)).toEqual(rows().map((p) => p.timestamp));
  });

  it('several rows in one bucket: summed, stamped with the last row', () => {
    const out = runBacktest('surge', rows(), { bucketMs: 15 * MIN });
    expect(out).toHaveLength(200);
    expect(out[0]).toMatchObject({ timestamp: T0, rowTimestamp: T0 + offset + 10 * MIN, rows: 3 });
    expect(out[0].value).toBe(rows().slice(0, 3).reduce((a, p) => a + p.value, 0));
  });

  it('infers the width as the most common spacing, so one stray row does not set it', () => {
    const series = rows();
    series.splice(10, 0, { timestamp: series[10].timestamp - 1000, value: 1 });
    expect(inferBucketMs(series)).toBe(5 * MIN);
    expect(backtest('surge', series)).toMatchObject({ bucketMs: 5 * MIN, bucketSource: 'inferred' });
    expect(backtest('surge', series, { bucketMs: 10 * MIN })).toMatchObject({ bucketMs: 10 * MIN, bucketSource: 'given' });
    expect(backtest('velocity', series)).toMatchObject({ bucketMs: 30 * MIN, bucketSource: 'detector minimum' });
    expect(backtest('velocity', series).points[0]).toMatchObject({ timestamp: T0, rows: 6, rowTimestamp: T0 + offset + 25 * MIN });
    expect(inferBucketMs([{ timestamp: T0, value: 1 }])).toBeUndefined();
    expect(backtest('surge', [{ timestamp: T0, value: 1 }]).bucketMs).toBe(DEFAULT_SURGE_PARAMS.bucketMs);
  });

  it('surge: carries the expected value and the firing bound after warm-up', () => {
    const out = runBacktest('surge', rows());
    expect(Number.isNaN(out[0].expected)).toBe(true);
    const late = out.slice(300, 499);
    for (const p of late) {
      expect(p.expected).toBeGreaterThan(0);
      expect(p.upper).toBeGreaterThan(p.expected);
    }
  });

  it('velocity: the firing bound is the smallest count that fires, and the detector agrees', () => {
    const p = { ...DEFAULT_VELOCITY_PARAMS };
    for (const [n, base] of [
      [1000, 0.002],
      [1000, 0.01],
      [300, 0.05],
      [50, 0.002],
    ] as const) {
      const u = velocityUpper(p, n, base);
      const ok = (c: number) => c >= p.minCount && c / n >= p.minRatio * base && Math.sqrt(binomialDeviance(c, n, base) / p.dispersion) >= p.threshold;
      expect(ok(u)).toBe(true);
      expect(ok(u - 1)).toBe(false);
    }
    expect(velocityUpper(p, 3, 0.002)).toBe(Infinity); // 3 posts can never hold minCount 5
    const r = rng(5);
    const series = Array.from({ length: 200 }, (_, i) => ({ timestamp: T0 + i * 30 * MIN, value: poisson(r, 10) }));
    for (const pt of runBacktest('velocity', series)) {
      if (Number.isNaN(pt.upper)) continue;
      expect(pt.expected).toBeGreaterThan(0);
      if (pt.value < pt.upper) expect(pt.detected).toBe(false);
    }
  });
});

describe('labelled windows', () => {
  const csvName = 'Twitter_volume_X.csv';

  it("reads NAB's windows.json by file name, or a plain list of pairs or objects", () => {
    const nab = JSON.stringify({ [csvName]: [['2024-01-01 01:00:00.000000', '2024-01-01 02:00:00.000000']], other: [] });
    expect(parseLabelWindows(nab, csvName)).toEqual([{ startMs: T0 + 3_600_000, endMs: T0 + 7_200_000 }]);
    expect(parseLabelWindows('[["2024-01-01T00:00:00Z", 1704070800]]', 'any')).toEqual([{ startMs: T0, endMs: T0 + 3_600_000 }]);
    expect(parseLabelWindows('[{"start": "2024-01-01", "end": "2024-01-01T00:30:00Z"}]', 'any')).toEqual([{ startMs: T0, endMs: T0 + 1_800_000 }]);
    expect(parseLabelWindows('[]', 'any')).toEqual([]);
  });

  it('says what is wrong with a bad labels file', () => {
    const cases: [string, RegExp][] = [
      ['{', /^not JSON/],
      ['{"a.csv": []}', /no windows for "Twitter_volume_X.csv" \(the file has "a.csv"\)/],
      ['{}', /no windows for .*no entries/],
      ['"x"', /expected a list/],
      ['[["2024-01-01"]]', /window 1: expected \[start, end\]/],
      ['[["2024-01-01", "soon"]]', /window 1: expected/],
      ['[null]', /window 1: expected/],
      ['[["2024-01-02", "2024-01-01"]]', /window 1: end is before start/],
    ];
    for (const [text, message] of cases) expect(() => parseLabelWindows(text, csvName)).toThrow(message);
    expect(() => parseLabelWindows('{', csvName)).toThrow(LabelsParseError);
  });

  it('scores a run with the NAB standard profile: a window caught at its start, a false alarm far from it', () => {
    const n = 2000;
    const series = Array.from({ length: n }, (_, i) => ({ timestamp: T0 + i * 300_000, value: 1 }));
    const at = (i: number) => series[i].timestamp;
    const points = series.map((p, i) => ({ timestamp: p.timestamp, rowTimestamp: p.timestamp, rows: 1, value: 1, score: 0, expected: 1, upper: 5, detected: i === 1000 || i === 1800 }));
    const s = scoreBacktest(series, points, [{ startMs: at(1000), endMs: at(1100) }]);
    expect(s).toMatchObject({ windows: 1, caught: 1, falseAlarms: 1, detections: 2 });
    // Caught at its first row: ≈ +1; a false alarm far after it ≈ −0.11.
    expect(s.raw).toBeCloseTo(1 - 0.11, 1);
    expect(s.scoredWeeks).toBeCloseTo(((n - 1 - 300) * 300_000) / (7 * 86_400_000), 6);
    expect(s.falseAlarmsPerWeek).toBeCloseTo(1 / s.scoredWeeks, 6);
    const silent = scoreBacktest(series, points.map((p) => ({ ...p, detected: false })), [{ startMs: at(1000), endMs: at(1100) }]);
    expect(silent).toMatchObject({ score: 0, caught: 0, falseAlarms: 0 });
  });
});
