/**
 * `trendhooks backtest` as a real process (dist/, rebuilt by global-setup when stale): row
 * timestamps, --bucket, --labels (NAB standard profile), --plot, and one-line errors for bad input;
 * `--posts` over generated posts: delays, the summary line, --labels in the lab's format, gaps.
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
// Every case starts the CLI a few times; on a loaded machine one start takes seconds.
jest.setTimeout(120_000);
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

/**
 * `backtest --posts` on the real r/wallstreetbets posts beside the project (`../shared/data/reddit-wsb`,
 * whose README lists the stories and repost floods checked here). Without the data the suite is
 * skipped, except in CI (CI=true), where missing data fails it.
 */
const WSB = path.resolve(__dirname, '../../shared/data/reddit-wsb');
const haveWsb = fs.existsSync(path.join(WSB, 'wsb-2021-01.ndjson')) && fs.existsSync(path.join(WSB, 'wsb-2021-05.ndjson'));
const describeWsb = haveWsb || process.env.CI === 'true' ? describe : describe.skip;

interface ReplayLine {
  type: string;
  subreddit: string;
  time: string;
  data: { keyword?: string; keywords?: string[]; distinct_authors?: number; first_post_at?: string; window_start: string; window_end: string; event_id: string };
}

describeWsb('trendhooks backtest --posts on r/wallstreetbets', () => {
  const at = (iso: string) => Date.parse(iso);
  const minutes = (n: number) => n * MIN;
  async function replay(file: string): Promise<ReplayLine[]> {
    const run = await trendhooks(['backtest', '--posts', path.join(WSB, file), '--json']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const lines = run.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as ReplayLine & { summary?: { events: number } });
    // Every line is JSON; those with a `type` are the events, the last is the summary (no `type`).
    const events = lines.filter((l) => 'type' in l);
    expect(lines[lines.length - 1]).not.toHaveProperty('type');
    expect(lines[lines.length - 1].summary!.events).toBe(events.length);
    return events;
  }
  /** Velocity events emitted in [from, to] whose keywords include one of `words`. */
  const about = (events: ReplayLine[], from: string, to: string, words: string[]) =>
    events.filter((e) => e.type === 'trends.velocity' && at(e.time) >= at(from) && at(e.time) <= at(to) && e.data.keywords!.some((k) => words.includes(k)));

  it('January: reports the Cohen, Musk and TV stories (the TV one as one event), no repost flood, at most 15 velocity events', async () => {
    const events = await replay('wsb-2021-01.ndjson');
    const velocity = events.filter((e) => e.type === 'trends.velocity');
    expect(velocity.length).toBeGreaterThanOrEqual(3);
    expect(velocity.length).toBeLessThanOrEqual(15);
    for (const e of events.filter((x) => x.type === 'trends.velocity' || x.type === 'trends.surge')) {
      expect(e.data.distinct_authors).toEqual(expect.any(Number));
      expect(e.subreddit).toBe('wallstreetbets');
    }
    for (const e of velocity) {
      expect(e.data.keywords![0]).toBe(e.data.keyword);
      // Emitted once its bucket has closed, never before.
      expect(at(e.time)).toBeGreaterThanOrEqual(at(e.data.window_end));
    }
    // GameStop names Ryan Cohen to its board, first post 12:36:56: reported within the hour.
    expect(about(events, '2021-01-11T12:36:56Z', '2021-01-11T13:40:00Z', ['cohen', 'ryan'])).toHaveLength(1);
    // "Elon Musk is now the richest person", 15:20 on: reported within two hours, as one event.
    expect(about(events, '2021-01-07T15:20:00Z', '2021-01-07T17:30:00Z', ['musk', 'elon', 'richest'])).toHaveLength(1);
    // Josh Brown praises the subreddit on TV, first post 19:31:14: one event, whichever of the
    // story's words its first headlines carried (`cnbc`, `shout`, `josh`, `brown`), within 30 minutes.
    const tv = about(events, '2021-01-11T19:31:14Z', '2021-01-11T21:00:00Z', ['josh', 'brown', 'cnbc', 'shout']);
    expect(tv).toHaveLength(1);
    expect(tv[0].data.keywords).toEqual(expect.arrayContaining(['josh']));
    expect(tv[0].data.distinct_authors).toBeGreaterThanOrEqual(5);
    expect(at(tv[0].time) - at('2021-01-11T19:31:14Z')).toBeLessThanOrEqual(minutes(30));
    // Every story says when its first post was, no later than the window it was judged over ends.
    for (const e of velocity) expect(at(e.data.first_post_at as string)).toBeLessThan(at(e.data.window_end));
    // The three repost floods (one or two accounts): no event of any kind while they run or just after.
    for (const [from, to] of [
      ['2021-01-12T00:10:00Z', '2021-01-12T01:35:00Z'],
      ['2021-01-08T14:52:00Z', '2021-01-08T15:35:00Z'],
      ['2021-01-12T20:19:00Z', '2021-01-12T21:35:00Z'],
    ]) {
      expect(events.filter((e) => at(e.time) >= at(from) && at(e.time) <= at(to) + minutes(0))).toEqual([]);
    }
  }, 120_000);

  it('May (no authors at all): reports the SOS pump of 2021-05-06', async () => {
    const events = await replay('wsb-2021-05.ndjson');
    const sos = about(events, '2021-05-06T02:40:00Z', '2021-05-06T05:00:00Z', ['sos']);
    expect(sos).toHaveLength(1);
    expect(sos[0].data.distinct_authors).toBe(0);
    // Half of them are stories read off the posts (bench/detectors/labels/stories/); at most 2 a day.
    expect(events.filter((e) => e.type === 'trends.velocity').length).toBeLessThanOrEqual(12);
  }, 120_000);

  it('--plot draws the replay: the posts and every event', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-replay-'));
    const svg = path.join(dir, 'may.svg');
    try {
      const run = await trendhooks(['backtest', '--posts', path.join(WSB, 'wsb-2021-05.ndjson'), '--plot', svg]);
      expect(run.code).toBe(0);
      const events = run.stdout.trim().split('\n').filter((l) => /^\d{4}-/.test(l));
      expect(run.stdout.trim().split('\n').pop()).toMatch(new RegExp(`^summary: ${events.length} events? in `));
      expect(run.stderr).toMatch(new RegExp(`replayed 9406 posts \\(r/wallstreetbets 9406\\), 0 skipped; ${events.length} events`));
      const text = fs.readFileSync(svg, 'utf8');
      expect(text).toMatch(new RegExp(`velocity events \\(${events.length}\\)`));
      expect(text).toMatch(/velocity: [a-z]*sos/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

/**
 * Generated posts (not the shared data): six days of background chatter at one post per two minutes,
 * six hours with no data on day 3, one story (14 authors, 28 minutes) and one surge (300 posts in an
 * hour), so the events, their delays and the label scores are known.
 */
describe('trendhooks backtest --posts: delays, summary, --labels', () => {
  const DAY = 1440 * MIN;
  const START = Date.UTC(2024, 2, 4);
  const STORY = START + 4 * DAY + 14 * 60 * MIN;
  const SURGE = START + 5 * DAY + 10 * 60 * MIN;
  const GAP = START + 3 * DAY;
  const isoZ = (ms: number) => new Date(ms).toISOString();
  let dir: string;
  let posts: string;
  const file = (name: string, body: unknown) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, typeof body === 'string' ? body : JSON.stringify(body));
    return f;
  };
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-replay-labels-'));
    const r = mulberry32(7);
    const words = 'market stock price call option put earnings trade money week chart volume short squeeze hold sell buy dividend portfolio index fund rate bond yield growth value loss gain'.split(' ');
    const word = () => words[Math.floor(r() * words.length)];
    const lines: string[] = [];
    const add = (ms: number, author: string, title: string) =>
      lines.push(JSON.stringify({ id: `p${lines.length.toString(36)}`, subreddit: 'testsub', author, title, selftext: '', created_utc: Math.floor(ms / 1000), score: 1, num_comments: 0, permalink: `/r/testsub/comments/p${lines.length.toString(36)}/x/` }));
    for (let m = 0; m < 6 * 1440; m += 2) {
      const t = START + m * MIN + Math.floor(r() * 2 * MIN);
      if (t >= GAP && t < GAP + 6 * 60 * MIN) continue;
      add(t, `u${Math.floor(r() * 400)}`, `${word()} ${word()} ${word()} ${word()}`);
    }
    for (let i = 0; i < 14; i++) add(STORY + i * 2 * MIN, `story${i}`, `Zorblax merger announced ${word()}`);
    for (let i = 0; i < 300; i++) add(SURGE + Math.floor(r() * 60 * MIN), `s${i}`, `${word()} ${word()} ${word()}`);
    posts = file('posts.ndjson', lines.join('\n') + '\n');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  interface Line {
    type?: string;
    time?: string;
    onset?: string | null;
    onset_from?: string | null;
    delay_min?: number | null;
    false_alarm?: boolean;
    data?: { event_id: string };
    label?: { ref: string; kind: string; caught: boolean; delay_min: number | null; event_id: string | null };
    summary?: {
      events: number;
      days: number;
      data_gaps: { from: string; to: string }[];
      by_kind: Record<string, { events: number; median_delay_min: number | null }>;
      labels?: Record<string, { labels: number; caught: number; missed: number; median_delay_min: number | null; false_alarms: number; false_alarms_per_day: number }>;
    };
  }
  const jsonLines = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l) as Line);

  it('--json: each event with its delay after its onset, then one summary line without a `type`', async () => {
    const run = await trendhooks(['backtest', '--posts', posts, '--json']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const lines = jsonLines(run.stdout);
    const events = lines.filter((l) => l.type !== undefined);
    expect(events.map((e) => e.type)).toEqual(['trends.velocity', 'trends.surge']);
    const [story, surge] = events;
    // The story's first post is in the file: its delay is measured from it.
    expect(story.onset_from).toMatch(/^(first_post_at|first_visible_post)$/);
    expect(story.onset).toBe(isoZ(STORY));
    expect(story.delay_min).toBe((Date.parse(story.time!) - STORY) / MIN);
    expect(story.delay_min).toBeLessThanOrEqual(60);
    expect(surge.onset_from).toBe('window_start');
    expect(surge.delay_min).toBe((Date.parse(surge.time!) - Date.parse(surge.onset!)) / MIN);
    const summary = lines[lines.length - 1];
    expect(summary).not.toHaveProperty('type');
    expect(lines.filter((l) => l.summary !== undefined)).toHaveLength(1);
    expect(summary.summary).toMatchObject({ events: 2, by_kind: { 'trends.velocity': { events: 1, median_delay_min: story.delay_min }, 'trends.surge': { events: 1 } } });
    // The six hours without posts are a gap in the data, not counted as days.
    expect(summary.summary!.data_gaps).toHaveLength(1);
    expect(Date.parse(summary.summary!.data_gaps[0].to) - Date.parse(summary.summary!.data_gaps[0].from)).toBeGreaterThanOrEqual(6 * 60 * MIN);
    expect(summary.summary!.days).toBeGreaterThan(5.6);
    expect(summary.summary!.days).toBeLessThan(5.8);
  });

  it('--labels (given twice) scores surges and stories: caught with their delay, missed, and false alarms per day', async () => {
    const surges = file('surges.json', { surges: [{ start: isoZ(SURGE), end: isoZ(SURGE + 60 * MIN), note: 'planted' }, { start: isoZ(START + DAY), end: isoZ(START + DAY + 60 * MIN) }] });
    const stories = file('stories.json', { stories: [{ first_post_at: isoZ(STORY), words: ['ZORBLAX'] }, { first_post_at: isoZ(START + 2 * DAY), words: ['quuxcorp'] }] });
    const text = await trendhooks(['backtest', '--posts', posts, '--labels', surges, '--labels', stories]);
    expect(text.code).toBe(0);
    const out = text.stdout.trim().split('\n');
    expect(out.filter((l) => /^label /.test(l))).toEqual([
      expect.stringMatching(/^label surges\.json surges\[0\] "planted" \(surge from 2024-03-09T10:00:00\.000Z\): caught by the trends\.surge event at \S+, \d+ min after its start$/),
      expect.stringMatching(/^label surges\.json surges\[1\] \(surge from 2024-03-05T00:00:00\.000Z\): missed$/),
      expect.stringMatching(/^label stories\.json stories\[0\] \(story, first post 2024-03-08T14:00:00\.000Z\): caught by the trends\.velocity event at \S+, \d+ min after its first post$/),
      expect.stringMatching(/^label stories\.json stories\[1\] .*: missed$/),
    ]);
    expect(out[out.length - 1]).toMatch(
      /^summary: 2 events in 5\.\d days with posts \(0\.3\d a day\): surge 1 .*, velocity 1 .*; labels: surges caught 1 of 2, missed 1 \(median delay \d+ min\), false alarms 0 \(0\.00 a day\); stories caught 1 of 2, missed 1 \(median delay \d+ min\), false alarms 0 \(0\.00 a day\)$/,
    );

    // Stories only, and an empty surge list: the surge is a false alarm, counted per day.
    const none = file('no-surges.json', { surges: [] });
    const json = await trendhooks(['backtest', '--posts', posts, '--labels', none, '--labels', stories, '--json']);
    expect(json).toMatchObject({ code: 0, stderr: '' });
    const lines = jsonLines(json.stdout);
    const events = lines.filter((l) => l.type !== undefined);
    expect(events.find((e) => e.type === 'trends.surge')!.false_alarm).toBe(true);
    expect(events.find((e) => e.type === 'trends.velocity')!.false_alarm).toBe(false);
    const labels = lines.filter((l) => l.label !== undefined).map((l) => l.label!);
    expect(labels.map((l) => [l.ref, l.caught])).toEqual([
      ['stories.json stories[0]', true],
      ['stories.json stories[1]', false],
    ]);
    expect(labels[0].event_id).toBe(events.find((e) => e.type === 'trends.velocity')!.data!.event_id);
    const { summary } = lines[lines.length - 1];
    expect(summary!.labels!.surges).toMatchObject({ labels: 0, caught: 0, false_alarms: 1 });
    expect(summary!.labels!.surges.false_alarms_per_day).toBeCloseTo(1 / summary!.days, 2);
    expect(summary!.labels!.stories).toMatchObject({ labels: 2, caught: 1, missed: 1, false_alarms: 0, median_delay_min: labels[0].delay_min });
  });

  it('one error line naming the labels file and the field, exit 1, nothing else printed', async () => {
    const bad = file('bad.json', { stories: [{ first_post_at: 'Tuesday', words: ['x'] }] });
    const nab = file('windows.json', { 'posts.ndjson': [] });
    for (const [f, msg] of [
      [bad, /^error: labels \S+bad\.json: stories\[0\]\.first_post_at: expected an ISO 8601 time/],
      [nab, /^error: labels \S+windows\.json: has neither a "surges" nor a "stories" array/],
      [path.join(dir, 'missing.json'), /^error: cannot read labels \S+missing\.json: ENOENT/],
    ] as const) {
      const run = await trendhooks(['backtest', '--posts', posts, '--labels', f]);
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr).toMatch(/^error: [^\n]+\n$/);
      expect(run.stderr).toMatch(msg);
    }
    const two = await trendhooks(['backtest', '--kind', 'surge', '--series', posts, '--labels', bad, '--labels', bad]);
    expect(two.stderr).toMatch(/^error: --series takes one --labels file/);
  });

  it('--plot: the gap hatched as no data, a marker per event, the labels, a legend of what is drawn', async () => {
    const svg = path.join(dir, 'replay.svg');
    const stories = file('plot-stories.json', { stories: [{ first_post_at: isoZ(STORY), words: ['zorblax'] }] });
    const run = await trendhooks(['backtest', '--posts', posts, '--labels', stories, '--plot', svg]);
    expect(run.code).toBe(0);
    const text = fs.readFileSync(svg, 'utf8');
    expect(text).toContain('no data (1 gap)');
    expect(text).toContain('velocity events (1)');
    expect(text).toContain('surge events (1)');
    expect(text).toContain('labelled stories, at their first post (1)');
    expect(text.match(/<circle /g)).toHaveLength(2);
    expect(text).not.toMatch(/expected \(baseline\)|detections \(0\)|NaN/);
  });
});

describe('trendhooks backtest --posts, bad input', () => {
  it('one error line for a file it cannot use or options that do not go with --posts', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-replay-bad-'));
    try {
      const junk = path.join(dir, 'junk.ndjson');
      fs.writeFileSync(junk, '{"not": "a post"}\n');
      for (const [args, msg] of [
        [['--posts', path.join(dir, 'missing.ndjson')], /cannot read posts .*ENOENT/],
        [['--posts', junk], /no Reddit post could be read \(line 1: /],
        [['--posts', junk, '--kind', 'surge'], /--kind applies to --series only/],
        [['--posts', junk, '--series', junk], /give exactly one of --series FILE \(with --kind\) or --posts FILE/],
        [[], /give exactly one of --series/],
        [['--series', junk], /--series needs --kind/],
      ] as const) {
        const run = await trendhooks(['backtest', ...args]);
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(/^error: [^\n]+\n$/);
        expect(run.stderr).toMatch(msg);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
