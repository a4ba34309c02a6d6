/**
 * `trendhooks backtest` as a real process (dist/, rebuilt by global-setup when stale): row
 * timestamps, --bucket, --labels (NAB standard profile), --plot, and one-line errors for bad input.
 * No database is involved, so the suite is the same on SQLite and PostgreSQL.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { mulberry32 } from '../src/common/prng';
import { poisson } from './support/random';

const exec = promisify(execFile);
const CLI = path.resolve(__dirname, '../dist/cli.js');
const MIN = 60_000;
const T0 = Date.UTC(2024, 0, 1);
/** Rows stamped 2 min 53 s past the 5-minute grid, as NAB's realTweets series are. */
const OFFSET = (2 * 60 + 53) * 1000;
const BURST = 800;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function trendhooks(args: string[]): Promise<Run> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('.000Z', '');
}

describe('trendhooks backtest', () => {
  let dir: string;
  let series: string;
  let labels: string;
  const rowTimes: number[] = [];
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-backtest-'));
    series = path.join(dir, 'series.csv');
    labels = path.join(dir, 'windows.json');
    const r = mulberry32(21);
    const lines = ['timestamp,value'];
    for (let i = 0; i < 1200; i++) {
      const t = T0 + OFFSET + i * 5 * MIN;
      rowTimes.push(t);
      lines.push(`${iso(t)},${poisson(r, i >= BURST && i < BURST + 24 ? 200 : 20)}`);
    }
    fs.writeFileSync(series, lines.join('\n') + '\n');
    fs.writeFileSync(labels, JSON.stringify({ 'series.csv': [[iso(rowTimes[BURST - 12]), iso(rowTimes[BURST + 36])]] }));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("prints each detection at the series' own row timestamp (13:57:53, not the grid's 13:55:00)", async () => {
    const run = await trendhooks(['backtest', '--kind', 'surge', '--series', series, '--json']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as { timestamp: string; bucket_start: string; value: number; expected: number; lift: number });
    expect(lines.length).toBeGreaterThanOrEqual(1);
    const first = lines[0];
    expect(rowTimes).toContain(Date.parse(first.timestamp));
    expect(Date.parse(first.timestamp) - Date.parse(first.bucket_start)).toBe(OFFSET);
    expect(Date.parse(first.timestamp)).toBeGreaterThanOrEqual(rowTimes[BURST]);
    expect(first.lift).toBeGreaterThan(2);
    expect(first.expected).toBeGreaterThan(0);
  });

  it('says the width it inferred, takes --bucket, and rejects a width the detector cannot use', async () => {
    const inferred = await trendhooks(['backtest', '--kind', 'surge', '--series', series]);
    expect(inferred.code).toBe(0);
    expect(inferred.stderr).toMatch(/1200 rows in 1200 buckets of 5 min \(inferred\)/);
    const given = await trendhooks(['backtest', '--kind', 'surge', '--series', series, '--bucket', '15m']);
    expect(given.code).toBe(0);
    expect(given.stderr).toMatch(/1200 rows in 400 buckets of 15 min \(given\)/);
    for (const [bucket, msg] of [
      ['5 minutes', /--bucket must be a positive duration/],
      ['0m', /--bucket must be a positive duration/],
      ['1.5ms', /--bucket must be a positive duration/],
    ] as const) {
      const bad = await trendhooks(['backtest', '--kind', 'surge', '--series', series, '--bucket', bucket]);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/^error: [^\n]+\n$/);
      expect(bad.stderr).toMatch(msg);
    }
  });

  it('--labels scores the run with the NAB standard profile, --plot draws it', async () => {
    const svg = path.join(dir, 'out.svg');
    const run = await trendhooks(['backtest', '--kind', 'surge', '--series', series, '--labels', labels, '--plot', svg]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/NAB standard profile: score \d+\.\d, windows caught 1\/1, false alarms \d+ \([\d.]+ per week\), detections \d+/);
    const text = fs.readFileSync(svg, 'utf8');
    expect(text.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(text.trim().endsWith('</svg>')).toBe(true);
    expect(text).toMatch(/labelled windows \(1\)/);
    const detections = run.stdout.split('\n').filter((l) => /value=/.test(l)).length;
    expect(text.match(/<circle /g)).toHaveLength(detections);

    const json = await trendhooks(['backtest', '--kind', 'surge', '--series', series, '--labels', labels, '--json']);
    const nab = JSON.parse(json.stdout.trim().split('\n').pop()!) as { nab: { caught: number; windows: number } };
    expect(nab.nab).toMatchObject({ caught: 1, windows: 1 });
  });

  it('--labels without a window for the series says there is no score, and still counts its false alarms', async () => {
    const none = path.join(dir, 'none.json');
    fs.writeFileSync(none, JSON.stringify({ 'series.csv': [] }));
    const run = await trendhooks(['backtest', '--kind', 'surge', '--series', series, '--labels', none]);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(/Infinity|NaN/);
    expect(run.stdout).toMatch(/NAB standard profile: score n\/a \(no labelled windows after probation\), windows caught 0\/0, false alarms [1-9]\d* \([\d.]+ per week\)/);
    const json = await trendhooks(['backtest', '--kind', 'surge', '--series', series, '--labels', none, '--json']);
    const nab = JSON.parse(json.stdout.trim().split('\n').pop()!) as { nab: { score: number | null; windows: number; false_alarms: number } };
    expect(nab.nab).toMatchObject({ score: null, windows: 0 });
    expect(nab.nab.false_alarms).toBeGreaterThan(0);
  });

  it('velocity reads a keyword count series with an assumed total', async () => {
    const run = await trendhooks(['backtest', '--kind', 'velocity', '--series', series, '--assumed-total', '5000', '--json']);
    expect(run.code).toBe(0);
    const stamps = run.stdout.trim().split('\n').filter(Boolean).map((l) => Date.parse((JSON.parse(l) as { timestamp: string }).timestamp));
    expect(stamps.length).toBeGreaterThanOrEqual(1);
    for (const t of stamps) expect(rowTimes).toContain(t);
    const bad = await trendhooks(['backtest', '--kind', 'velocity', '--series', series, '--assumed-total', 'many']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: --assumed-total must be a positive integer, got "many"\n$/);
    const notVelocity = await trendhooks(['backtest', '--kind', 'surge', '--series', series, '--assumed-total', '10']);
    expect(notVelocity.stderr).toMatch(/^error: --assumed-total applies to --kind velocity only\n$/);
  });

  it('one error line for a labels file it cannot read or use', async () => {
    const other = path.join(dir, 'other.json');
    fs.writeFileSync(other, JSON.stringify({ 'a.csv': [] }));
    const broken = path.join(dir, 'broken.json');
    fs.writeFileSync(broken, '[["2024-01-01"]]');
    for (const [file, msg] of [
      [path.join(dir, 'missing.json'), /cannot read labels .*ENOENT/],
      [other, /no windows for "series.csv"/],
      [broken, /window 1: expected \[start, end\]/],
    ] as const) {
      const run = await trendhooks(['backtest', '--kind', 'surge', '--series', series, '--labels', file]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^error: [^\n]+\n$/);
      expect(run.stderr).toMatch(msg);
    }
    const plot = await trendhooks(['backtest', '--kind', 'surge', '--series', series, '--plot', path.join(dir, 'no', 'such', 'dir.svg')]);
    expect(plot.stderr).toMatch(/^error: cannot write plot .*ENOENT/);
  });
});
