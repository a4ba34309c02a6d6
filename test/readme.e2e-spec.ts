import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { EVENT_CATALOGUE } from '../src/events/catalogue';
import { freePort } from './support/ports';

/**
 * The README's quick start, demo and walk-through, run as written, so they cannot rot; and every
 * figure it quotes, checked against the file it comes from, so none is stale or stated twice.
 * Each block runs with bash in a scratch folder shaped like a clone after `npm ci` (package.json,
 * bin/, and this checkout's node_modules/ and dist/), so its ./data database is a scratch one; only
 * the ports are changed (8080, through PORT and in the URLs, and 9443 to free ones), since other
 * suites run alongside. SQLite: the blocks use the default database.
 */
const ROOT = path.resolve(__dirname, '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The section whose heading starts with `heading`, up to the next `## `. */
function section(heading: string): string {
  const start = README.indexOf(`\n## ${heading}`);
  if (start < 0) throw new Error(`README has no "## ${heading}" section`);
  const next = README.indexOf('\n## ', start + 4);
  return README.slice(start, next < 0 ? undefined : next);
}

/** The ```sh blocks of the section whose heading starts with `heading`. */
function shellBlocks(heading: string): string[] {
  return [...section(heading).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

/** The plain ``` block (a program's output) of the section whose heading starts with `heading`. */
function outputBlock(heading: string): string {
  const m = /\n\n```\n([\s\S]*?)\n```/.exec(section(heading));
  if (!m) throw new Error(`README's "## ${heading}" shows no output block`);
  return m[1];
}

function scratchClone(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-readme-'));
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  for (const d of ['node_modules', 'dist', 'bin']) fs.symlinkSync(path.join(ROOT, d), path.join(dir, d));
  return dir;
}

/** Settings of the environment the suite runs in must not leak into a newcomer's shell. */
function newcomerEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (/^(DATABASE_URL|PORT|HOST|REDIS_URL|CURSOR_SECRET|LOG_LEVEL|SSRF_|DELIVERY_|REDDIT_|TRACKED_|PLAN_|HTTP_ADAPTER|METRICS_|ENCRYPTION_)/.test(k)) delete env[k];
  }
  return env;
}

/** A figure's source: a function of the named file's parsed JSON, and the factor the README shows it at (100 for a percentage). */
type Source = ((json: any) => number) | [(json: any) => number, number];

/** The webhooks list's figures of one adapter and database in api-throughput.json. */
const apiRow = (adapter: string, database: string) => (j: any) => j.results.find((r: any) => r.adapter === adapter && r.database === database).routes.webhooks_list;

/**
 * Every row of the README's Performance table: the file it names, and the source of each number in
 * the row (its words and its figures, in the order they appear; the `from` column aside). A row
 * the table gains without an entry here, or a number without its source, fails the test.
 */
const FIGURES: { row: string; file: string; numbers: Source[] }[] = [
  {
    row: 'deliveries/s for one event fanned out to',
    file: 'delivery.json',
    numbers: [
      (j) => j.parameters.sizes[j.parameters.sizes.length - 1],
      (j) => j.summary.e2e.sqlite[j.parameters.sizes[j.parameters.sizes.length - 1]].per_s.median,
      (j) => j.summary.e2e.sqlite[j.parameters.sizes[j.parameters.sizes.length - 1]].ratio_to_raw.median,
      (j) => j.summary.e2e.postgres[j.parameters.sizes[j.parameters.sizes.length - 1]].per_s.median,
      (j) => j.summary.e2e.postgres[j.parameters.sizes[j.parameters.sizes.length - 1]].ratio_to_raw.median,
    ],
  },
  {
    row: 'one event fanned out to',
    file: 'fanout.json',
    numbers: [(j) => j.parameters.webhooks, (j) => j.results.sqlite.emit_ms.median, (j) => j.results.postgres.emit_ms.median],
  },
  {
    row: 'posts page at depth',
    file: 'pagination-depth.json',
    numbers: [(j) => j.results.sqlite.rows, (j) => j.results.sqlite.http.ratio_deep_to_first, (j) => j.results.postgres.http.ratio_deep_to_first],
  },
  {
    row: '`GET /v1/webhooks?limit=',
    file: 'api-throughput.json',
    numbers: [
      (j) => j.page_size,
      (j) => apiRow('express', 'sqlite')(j).ours_rps.median,
      (j) => apiRow('express', 'sqlite')(j).ratio.median,
      (j) => apiRow('express', 'postgres')(j).ours_rps.median,
      (j) => apiRow('express', 'postgres')(j).ratio.median,
    ],
  },
  {
    row: 'the Reddit poller on one OAuth client',
    file: 'ingest.json',
    numbers: [(j) => j.parameters.subreddits, [(j) => j.requests.steady.share_of_quota, 100], (j) => j.posts.missed_total, (j) => j.delay_s.steady.p99],
  },
  {
    row: 'surge on real labelled series',
    file: 'detectors-quality.json',
    numbers: [(j) => j.surgeReal.total.score, (j) => j.surgeReal.leaveOneFileOut.total],
  },
];

/** The numbers of a stretch of README text: `8,327`, `0.464`, `1,000,000`; not the digits inside words (`p99`, `v1`). */
function numbersIn(text: string): string[] {
  return [...text.matchAll(/(?<![\w.])\d[\d,]*(?:\.\d+)?/g)].map((m) => m[0].replace(/,$/, ''));
}

/** Whether the README's `shown` is `value` rounded to as many decimals as `shown` has. */
function shows(shown: string, value: number): boolean {
  const decimals = shown.split('.')[1]?.length ?? 0;
  return Number(shown.replace(/,/g, '')) === Number(value.toFixed(decimals));
}

interface Ran {
  code: number | null;
  out: string;
}

/** Runs `script` with bash -e in `cwd`, its own process group, killed whole after `timeoutMs`. */
function runBash(script: string, cwd: string, timeoutMs: number, env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd, env: { ...newcomerEnv(), ...env }, detached: true });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => {
      out += `\n[readme test: killed after ${timeoutMs} ms]`;
      process.kill(-child.pid!, 'SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, 'SIGKILL'); // whatever the block left in the background
      } catch {
        /* the group is gone */
      }
      resolve({ code, out });
    });
  });
}

describe('README', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  it('stays a ten-minute read: under 40,000 bytes, the reference material in docs/', () => {
    expect(Buffer.byteLength(README)).toBeLessThan(40_000);
  });

  it('quick start: npm start serves the API on the port it names', async () => {
    const [block] = shellBlocks('Quick start');
    const lines = block.split('\n').filter((l) => l.trim() && !l.startsWith('#'));
    expect(lines.map((l) => l.replace(/\s*#.*$/, ''))).toEqual(['npm ci', 'npm run build', 'npm start']);
    const port = await freePort();
    const dir = scratchClone();
    dirs.push(dir);
    // `npm ci` and the build already ran for this checkout (the scratch folder borrows its node_modules/ and dist/).
    const script = block.replace(/^npm ci\b.*$/m, '').replace(/^npm run build$/m, '').replace(/8080/g, String(port)).replace(/^npm start\b.*$/m, 'npm start > start.log 2>&1 &'); // it serves until stopped
    const ran = await runBash(
      `${script}\nuntil curl -sf http://127.0.0.1:${port}/healthz; do sleep 0.5; done\ncurl -sf http://127.0.0.1:${port}/readyz\nkill %1; wait %1 || true`,
      dir,
      90_000,
      { PORT: String(port) },
    );
    expect({ code: ran.code, out: ran.out }).toEqual({ code: 0, out: expect.stringContaining('{"status":"ok","checks":{"database":"up"}}') });
    expect(fs.existsSync(path.join(dir, 'data/trendhooks.db'))).toBe(true);
  }, 120_000);

  it('demo: prints the deliveries the README shows, figure for figure', async () => {
    const [block] = shellBlocks('Demo');
    expect(block.replace(/\s*#.*$/gm, '').trim()).toBe('node bin/trendhooks.js demo');
    const shown = outputBlock('Demo').trim().split('\n');
    const dir = scratchClone();
    dirs.push(dir);
    const ran = await runBash(block, dir, 60_000);
    expect({ code: ran.code, out: ran.code === 0 ? '' : ran.out }).toEqual({ code: 0, out: '' });
    const printed = ran.out.split('\n').filter((l) => l.startsWith('✔ '));
    const pattern = (line: string) => new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/msg_…/g, 'msg_\\w+')}$`);
    expect({ printed, matches: shown.map((l) => printed.some((p) => pattern(l).test(p))) }).toEqual({ printed, matches: shown.map(() => true) });
  }, 90_000);

  it('performance: each figure is the one in the file its row names', () => {
    const perf = section('Performance');
    const rows = perf
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| what |'))
      .map((l) => l.slice(2, -2).split(' | '));
    expect(rows.length).toBeGreaterThan(0);
    const checked = rows.map((cells) => {
      const from = cells[cells.length - 1];
      const text = cells.slice(0, -1).join(' | ');
      const spec = FIGURES.find((f) => text.startsWith(f.row));
      if (!spec) return { row: text, problem: 'no entry in FIGURES: say where its figures come from' };
      if (from !== `\`${spec.file}\``) return { row: text, problem: `names ${from}, its figures come from ${spec.file}` };
      const json: unknown = JSON.parse(fs.readFileSync(path.join(ROOT, 'bench/results', spec.file), 'utf8'));
      const shown = numbersIn(text);
      if (shown.length !== spec.numbers.length) return { row: text, problem: `${shown.length} numbers, ${spec.numbers.length} sources` };
      const wrong = shown
        .map((s, i) => {
          const [get, factor] = Array.isArray(spec.numbers[i]) ? (spec.numbers[i] as [(j: unknown) => number, number]) : [spec.numbers[i] as (j: unknown) => number, 1];
          const value = get(json) * factor;
          return shows(s, value) ? null : `${s} is ${value} in ${spec.file}`;
        })
        .filter((w) => w !== null);
      return { row: text, problem: wrong.length ? wrong.join('; ') : null };
    });
    expect(checked.filter((c) => c.problem !== null)).toEqual([]);
    expect(rows.length).toBe(FIGURES.length);
  });

  it('quotes no measured figure outside the Performance table and the demo output (one figure per claim, each checked)', () => {
    const table = section('Performance')
      .split('\n')
      .filter((l) => l.startsWith('|'));
    const measured = README.replace(outputBlock('Demo'), '')
      .split('\n')
      .filter((l) => !table.includes(l))
      .filter((l) => /(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:×|req\/s|deliveries\/s|µs\b|MB\b)|\d ?s (?:here|in the last)\b/.test(l));
    expect(measured).toEqual([]);
  });

  it('walk-through: from a clone to a delivery verified and printed by trendhooks listen, offline', async () => {
    const [block] = shellBlocks('Walk-through');
    expect(block).toContain('--print-env');
    const [api, receiver] = [await freePort(), await freePort()];
    const dir = scratchClone();
    dirs.push(dir);
    const ran = await runBash(block.replace(/8080/g, String(api)).replace(/9443/g, String(receiver)), dir, 150_000, { PORT: String(api) });
    if (ran.code !== 0) {
      const log = path.join(dir, 'trendhooks.log');
      ran.out += fs.existsSync(log) ? `\n--- trendhooks.log\n${fs.readFileSync(log, 'utf8').slice(-4000)}` : '';
    }
    expect({ code: ran.code, out: ran.out }).toEqual({ code: 0, out: expect.stringMatching(/✔ \S+ trends\.surge r\/typescript — webhook-id msg_\w+, signature verified/) });
    expect(ran.out).toContain(`export SSRF_ALLOW_DESTINATIONS=127.0.0.1:${receiver}`);
    // --example: the catalogue's example figures arrive as they are documented.
    expect(ran.out).toContain(`"count": ${EVENT_CATALOGUE['trends.surge'].example.data.count}`);
    expect(ran.out).toContain('event evt_');
    // Every answer the block prints ends its line: the webhook, its deliveries page, the DELETE's status.
    expect(ran.out.match(/^\{"data":.*\}$/gm) ?? []).toHaveLength(2);
    expect(ran.out).toMatch(/\n204\n/);
    expect(ran.out).toMatch(/revoked th_live_\w+/);
    expect(ran.out).toContain('stopped after 1 verified delivery');
  }, 180_000);

  it('worked signature example: the shell recipe prints the stated signature, and standardwebhooks accepts it', async () => {
    const [block] = shellBlocks('Verifying');
    const stated = /webhook-signature: v1,([A-Za-z0-9+/=]+)`/.exec(README)![1];
    const ran = await runBash(block, os.tmpdir(), 30_000);
    expect(ran).toEqual({ code: 0, out: `${stated}\n` });
    const secret = /the secret `(whsec_[^`]+)`/.exec(README)![1];
    const id = /`webhook-id: (msg_\w+)`/.exec(README)![1];
    const timestamp = /`webhook-timestamp: (\d+)`/.exec(README)![1];
    const body = /and the body\n`([^`]+)`/.exec(README)![1];
    jest.useFakeTimers({ now: Number(timestamp) * 1000 + 10_000 });
    try {
      expect(new Webhook(secret).verify(body, { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${stated}` })).toMatchObject({ type: 'trends.surge' });
    } finally {
      jest.useRealTimers();
    }
  });
});
