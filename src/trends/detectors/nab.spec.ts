import { nabFlags, nabTotal, scoreNabFile } from './nab';

/**
 * The expected figures are the reference scorer's own (`scoreFile` of the shared NAB scoring tool run
 * on this same fixture), so this spec pins the in-process scorer to it number for number.
 */
const STEP = 300_000;
/** Rows stamped mid-bucket, like the real series: 21:42:53. */
const T0 = Date.UTC(2015, 1, 26, 21, 42, 53);
const rows = Array.from({ length: 40 }, (_, i) => T0 + i * STEP);
/** Window 1 starts 1 s after row 10 (so at row 11) and ends on row 16; window 2 covers rows 25–29. */
const windows = [
  { startMs: T0 + 10 * STEP + 1000, endMs: T0 + 16 * STEP },
  { startMs: T0 + 25 * STEP, endMs: T0 + 30 * STEP - 1 },
];
const flagsAt = (idx: number[]) => rows.map((_, i) => idx.includes(i));

describe('scoreNabFile (NAB standard profile)', () => {
  it('scores silence 0: each window a miss of weight 1', () => {
    expect(scoreNabFile(rows, flagsAt([]), windows)).toEqual({ score: 0, raw: -2, windows: 2, caught: 0, falseAlarms: 0, detections: 0 });
  });

  it('scores a flag on the first row of every window 100', () => {
    const s = scoreNabFile(rows, flagsAt([11, 25]), windows);
    expect(s.raw).toBeCloseTo(2, 12);
    expect(s.score).toBeCloseTo(100, 10);
    expect(s.caught).toBe(2);
  });

  it('matches the reference scorer on early, late, probation and post-window false alarms', () => {
    // Row 2 is in probation (15 % of 40 rows = 6) and not scored; 8 is before the first window;
    // 14 and 15 are in window 1 (only the earlier counts); 18, 20, 24 follow window 1; 29 is the
    // last row of window 2; 33 and 39 follow it.
    const s = scoreNabFile(rows, flagsAt([2, 8, 14, 15, 18, 20, 24, 29, 33, 39]), windows);
    expect(s.raw).toBeCloseTo(0.6999080439412755, 12);
    expect(s.score).toBeCloseTo(67.49770109853188, 10);
    expect(s).toMatchObject({ windows: 2, caught: 2, falseAlarms: 6, detections: 10 });
  });

  it('rewards a late catch less and discounts a false alarm just after a window', () => {
    const s = scoreNabFile(rows, flagsAt([16, 29, 31]), windows);
    expect(s.raw).toBeCloseTo(0.7745413401517851, 12);
    expect(s.score).toBeCloseTo(69.36353350379463, 10);
    expect(s.falseAlarms).toBe(1);
  });

  it('a file without labelled windows has no score (NaN, not −Infinity) and still counts its false alarms', () => {
    const s = scoreNabFile(rows, flagsAt([2, 8, 20]), []);
    expect(s.score).toBeNaN();
    expect(s).toMatchObject({ windows: 0, caught: 0, falseAlarms: 2, detections: 3 });
    expect(s.raw).toBeLessThan(0);
    expect(nabTotal([s])).toBeNaN();
  });

  it('rejects flags that do not line up with the rows', () => {
    expect(() => scoreNabFile(rows, [true], windows)).toThrow(RangeError);
  });
});

describe('nabTotal', () => {
  it('sums raw scores and windows across files before normalising', () => {
    const a = scoreNabFile(rows, flagsAt([11, 25]), windows);
    const b = scoreNabFile(rows, flagsAt([]), windows);
    const c = scoreNabFile(rows, flagsAt([]), windows.slice(0, 1));
    // (2 − 2 − 1 + 5) / (2 · 5) · 100
    expect(nabTotal([a, b, c])).toBeCloseTo(40, 10);
  });
});

describe('nabFlags', () => {
  it('flags the row whose span holds a detection stamped with a bucket start, as the reference scorer does', () => {
    // Row 12 (22:42:53) falls in the bucket starting 22:40:00, which lies in row 11's span.
    const bucketStart = Math.floor(rows[12] / STEP) * STEP;
    expect(nabFlags(rows, [bucketStart]).flatMap((f, i) => (f ? [i] : []))).toEqual([11]);
  });

  it('flags the row whose span holds the detection, once per row, in any order', () => {
    const f = nabFlags(rows, [rows[30] + 1, rows[3], rows[3] + 10, rows[39] + STEP - 1]);
    expect(f.flatMap((x, i) => (x ? [i] : []))).toEqual([3, 30, 39]);
  });

  it('ignores detections before the first row or past the last row', () => {
    expect(nabFlags(rows, [rows[0] - STEP, rows[39] + STEP]).some(Boolean)).toBe(false);
  });
});
