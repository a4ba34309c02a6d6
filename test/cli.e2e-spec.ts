import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { buildCli } from '../src/cli';

const exec = promisify(execFile);
const CLI = path.resolve(__dirname, '../dist/cli.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `trendhooks …args` as a real process (dist/, rebuilt by global-setup when stale). */
async function trendhooks(args: string[], env: Record<string, string> = {}): Promise<Run> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Every command path, e.g. ['keys', 'create'], from the same tree the bin runs. */
function commandPaths(cmd: Command, prefix: string[] = []): { path: string[]; cmd: Command }[] {
  return cmd.commands.flatMap((c) => [{ path: [...prefix, c.name()], cmd: c }, ...commandPaths(c, [...prefix, c.name()])]);
}

/** An operator-facing failure: exactly one `error: …` line on stderr, no stack trace. */
function expectOneLineError(run: Run, code: number, text: string | RegExp) {
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code, stderr: expect.stringMatching(/^error: [^\n]+\n$/) });
  expect(run.stderr).toMatch(text);
  expect(run.stderr).not.toMatch(/\n\s+at /);
}

describe('trendhooks CLI', () => {
  let dir: string;
  let sqlite: Record<string, string>;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-cli-'));
    sqlite = { DATABASE_URL: `sqlite:${path.join(dir, 'cli.db')}` };
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const commands = commandPaths(buildCli({}));

  it('knows the commands the README documents', () => {
    expect(commands.map((c) => c.path.join(' '))).toEqual(
      expect.arrayContaining(['serve', 'migrate', 'keys', 'keys create', 'keys revoke', 'ingest', 'events', 'events emit', 'openapi']),
    );
  });

  it("names every command in the README's list (Command line), as --help lists them", () => {
    const readme = fs.readFileSync(path.resolve(__dirname, '../README.md'), 'utf8');
    const line = readme.slice(readme.indexOf('\n## Command line'));
    const listed = new Set([...line.slice(0, line.indexOf('); `trendhooks <command> --help`')).matchAll(/`([a-z-]+)[ `|]/g)].map((m) => m[1]));
    expect(commands.filter((c) => c.path.length === 1).map((c) => c.path[0]).filter((name) => !listed.has(name))).toEqual([]);
  });

  it.each(commands.map((c) => [c.path.join(' '), c.cmd] as const))('describes "%s" and every option and argument of it', (_name, cmd) => {
    expect(cmd.description().length).toBeGreaterThan(10);
    for (const o of cmd.options) expect({ option: o.flags, description: o.description.length > 5 }).toEqual({ option: o.flags, description: true });
    for (const a of cmd.registeredArguments) expect({ argument: a.name(), description: a.description.length > 5 }).toEqual({ argument: a.name(), description: true });
  });

  it('answers --help on the program and on every command with its usage, exit 0', async () => {
    const runs = await Promise.all([[], ...commands.map((c) => c.path)].map(async (p) => ({ p, run: await trendhooks([...p, '--help']) })));
    for (const { p, run } of runs) {
      expect({ command: p.join(' '), code: run.code, stderr: run.stderr }).toEqual({ command: p.join(' '), code: 0, stderr: '' });
      expect(run.stdout).toContain(`Usage: trendhooks${p.length ? ' ' + p.join(' ') : ''}`);
      expect(run.stdout).toContain('-h, --help');
    }
  }, 120_000); // a dozen Node processes at once: slow on a loaded 2-core machine

  it('exits 2 with one error line for an unknown command, an unknown option, a missing option or a bad choice', async () => {
    const [unknown, option, missing, plan, role] = await Promise.all([
      trendhooks(['frobnicate'], sqlite),
      trendhooks(['migrate', '--bogus'], sqlite),
      trendhooks(['keys', 'create', '--customer', 'acme'], sqlite),
      trendhooks(['keys', 'create', '--customer', 'acme', '--plan', 'gold'], sqlite),
      trendhooks(['serve', '--role', 'everything'], sqlite),
    ]);
    expectOneLineError(unknown, 2, "unknown command 'frobnicate'");
    expectOneLineError(option, 2, "unknown option '--bogus'");
    expectOneLineError(missing, 2, "required option '--plan <plan>' not specified");
    expectOneLineError(plan, 2, /'gold' is invalid\. Allowed choices are free, pro, business, enterprise/);
    expectOneLineError(role, 2, /'everything' is invalid/);
  }, 120_000);

  it('exits 2 and shows the usage when no command is given', async () => {
    const run = await trendhooks([]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Usage: trendhooks');
  });

  it('answers help and --version with exit 0', async () => {
    const [help, version] = await Promise.all([trendhooks(['help']), trendhooks(['--version'])]);
    expect({ code: help.code, stderr: help.stderr }).toEqual({ code: 0, stderr: '' });
    expect(help.stdout).toContain('Usage: trendhooks');
    expect(version).toEqual({ code: 0, stdout: `${JSON.parse(fs.readFileSync(path.resolve(__dirname, '../package.json'), 'utf8')).version}\n`, stderr: '' });
  });

  it('exits 2 with one error line for a bad option value of any command', async () => {
    const [port, forward, count, timeout] = await Promise.all([
      trendhooks(['listen', '--port', '0']),
      trendhooks(['listen', '--forward-to', 'http://10.0.0.1/hooks']),
      trendhooks(['listen', '--count', 'many']),
      trendhooks(['demo', '--timeout', 'soon']),
    ]);
    expectOneLineError(port, 2, '--port must be from 1 to 65535, got "0"');
    expectOneLineError(forward, 2, '--forward-to must point at this machine');
    expectOneLineError(count, 2, '--count must be a whole number');
    expectOneLineError(timeout, 2, '--timeout must be a positive number of seconds');
  });

  it('says what migrate applied, and that a migrated database needed nothing', async () => {
    const db = { DATABASE_URL: `sqlite:${path.join(dir, 'migrate-says.db')}` };
    const first = await trendhooks(['migrate'], db);
    expect(first).toMatchObject({ code: 0, stdout: expect.stringMatching(/^applied \d+ migrations to SQLite .*migrate-says\.db: \w+/) });
    expect(await trendhooks(['migrate'], db)).toMatchObject({ code: 0, stdout: expect.stringMatching(/^database is up to date \(SQLite .*\); no migration applied\n$/) });
  });

  it('prints one error line for an unknown key prefix, and pluralises counts', async () => {
    expectOneLineError(await trendhooks(['keys', 'revoke', 'th_live_AbCdEfGh'], sqlite), 1, 'no active key matches th_live_AbCdEfGh');
    const emitted = await trendhooks(['events', 'emit', '--event', 'trends.surge', '--subreddit', 'nosubscribers', '--example'], sqlite);
    expect(emitted).toMatchObject({ code: 0, stdout: expect.stringMatching(/^event evt_\w+: 0 deliveries queued\n$/) });
  });

  it('ends quietly with exit 0 when its reader goes away (EPIPE)', async () => {
    // The demo prints its deliveries seconds apart: head has gone by the second one.
    const { stdout } = await exec('bash', ['-c', `${process.execPath} ${CLI} demo --json 2>err.txt | head -n 1 >/dev/null; echo "\${PIPESTATUS[0]}"; cat err.txt`], { cwd: dir, env: { ...process.env, DATABASE_URL: '' } });
    expect(stdout).toBe('0\n');
  }, 90_000);

  it('npm start (dist/main.js) fails like the CLI: one line naming the setting, no stack', async () => {
    const main = path.resolve(__dirname, '../dist/main.js');
    const run = async (env: Record<string, string>) => {
      try {
        await exec(process.execPath, [main], { env: { ...process.env, ...sqlite, ...env }, timeout: 60_000 });
        return { code: 0, stdout: '', stderr: '' };
      } catch (err) {
        return err as Run;
      }
    };
    const [timeout, host] = await Promise.all([run({ DELIVERY_TIMEOUT_MS: '-1' }), run({ HOST: 'no-such-host.invalid', PORT: '0', LOG_LEVEL: 'silent' })]);
    expectOneLineError(timeout, 1, 'bad configuration: DELIVERY_TIMEOUT_MS must be between 100 and 120000, got -1');
    expectOneLineError(host, 1, /^error: cannot listen on no-such-host\.invalid:0 \(HOST\/PORT\): (ENOTFOUND|EAI_AGAIN)/);
  }, 60_000);

  it('exits 1 with one error line for a file it cannot read', async () => {
    const [missing, folder] = await Promise.all([
      trendhooks(['ingest', '--file', path.join(dir, 'nope.ndjson')], sqlite),
      trendhooks(['ingest', '--file', dir], sqlite),
    ]);
    expectOneLineError(missing, 1, 'nope.ndjson does not exist');
    expectOneLineError(folder, 1, 'is not a regular file');
    expectOneLineError(await trendhooks(['openapi', '--check', path.join(dir, 'none.json')]), 1, /cannot read .*none\.json: ENOENT/);
  });

  it('exits 1 with one error line when the database cannot be reached or opened', async () => {
    fs.writeFileSync(path.join(dir, 'a-file.txt'), '');
    const [refused, absent, sqliteDir] = await Promise.all([
      trendhooks(['keys', 'create', '--customer', 'acme', '--plan', 'free'], { DATABASE_URL: 'postgres://postgres:sekret@127.0.0.1:1/nowhere' }),
      trendhooks(['migrate'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/th_cli_no_such_database' }),
      // A SQLite file whose folder cannot be made (its parent is a file).
      trendhooks(['migrate'], { DATABASE_URL: `sqlite:${path.join(dir, 'a-file.txt', 'sub', 'x.db')}` }),
    ]);
    expectOneLineError(refused, 1, 'cannot open the database (PostgreSQL 127.0.0.1:1/nowhere): connect ECONNREFUSED');
    expect(refused.stderr).not.toContain('sekret');
    if (process.env.TRENDHOOKS_TEST_PG !== '0') expectOneLineError(absent, 1, /cannot open the database .*th_cli_no_such_database.*does not exist/);
    expectOneLineError(sqliteDir, 1, /cannot open the database \(SQLite .*\): ENOTDIR/);
  });

  it('exits 1 with one error line for bad configuration and bad input', async () => {
    expectOneLineError(await trendhooks(['migrate'], { ...sqlite, PORT: 'eighty' }), 1, 'bad configuration: PORT must be an integer');
    expectOneLineError(await trendhooks(['migrate'], { HTTP_ADAPTER: 'koa' }), 1, 'bad configuration: HTTP_ADAPTER must be express or fastify');
    expectOneLineError(
      await trendhooks(['events', 'emit', '--event', 'trends.surge', '--subreddit', 'typescript', '--data', 'not json'], sqlite),
      1,
      '--data must be a JSON object',
    );
  });

  it("refuses events emit figures that do not fit the kind's schema, in one line naming the field, and emits nothing", async () => {
    // A database of its own: refused before it is opened, so the file is never even created.
    const untouched = path.join(dir, 'emit-refused.db');
    const db = { DATABASE_URL: `sqlite:${untouched}` };
    const emit = (...args: string[]) => trendhooks(['events', 'emit', '--event', 'trends.surge', '--subreddit', 'typescript', ...args], db);
    const [partial, type, unknown, reserved, neither, kind] = await Promise.all([
      emit('--data', '{"count": 42}'),
      emit('--example', '--data', '{"count": 4.5}'),
      emit('--example', '--data', '{"subreddit_rank": 3}'),
      emit('--example', '--data', '{"subreddit": "rust"}'),
      emit(),
      trendhooks(['events', 'emit', '--event', 'trends.other', '--subreddit', 'typescript', '--example'], db),
    ]);
    expectOneLineError(partial, 1, /^error: --data: trends\.surge requires "window_start", "window_end", "observed", .*"distinct_authors", .* and "previous_observed"/);
    expectOneLineError(type, 1, /^error: --data\.count must be an integer\n$/);
    expectOneLineError(unknown, 1, /^error: --data: trends\.surge has no field "subreddit_rank"\n$/);
    expectOneLineError(reserved, 1, /^error: --data\.subreddit is filled in by --subreddit; leave it out of --data\n$/);
    expectOneLineError(neither, 2, "the event's figures are needed: --example, or --data with every field of trends.surge's data");
    expectOneLineError(kind, 2, /'trends\.other' is invalid\. Allowed choices are trends\.surge, trends\.velocity, trends\.rising/);
    expect(fs.existsSync(untouched)).toBe(false);
    // The walk-through's command, and --data changing a field of the example.
    const example = await trendhooks(['events', 'emit', '--event', 'trends.surge', '--subreddit', 'typescript', '--example', '--json'], sqlite);
    expect({ code: example.code, stderr: example.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(example.stdout)).toEqual({ event_id: expect.stringMatching(/^evt_/), created: true, deliveries: 0 });
    const changed = await trendhooks(['events', 'emit', '--event', 'trends.velocity', '--subreddit', 'typescript', '--example', '--data', '{"count": 42}'], sqlite);
    expect(changed).toMatchObject({ code: 0, stdout: expect.stringMatching(/^event evt_\w+: 0 deliveries queued\n$/) });
  });

  it('writes the OpenAPI document and checks a file against it', async () => {
    const out = path.join(dir, 'openapi.json');
    const written = await trendhooks(['openapi', '--out', out]);
    expect(written).toMatchObject({ code: 0, stdout: `wrote ${out}\n` });
    expect(JSON.parse(fs.readFileSync(out, 'utf8')).openapi).toBe('3.1.0');
    expect((await trendhooks(['openapi', '--check', out])).code).toBe(0);
    fs.appendFileSync(out, ' ');
    expectOneLineError(await trendhooks(['openapi', '--check', out]), 1, 'differs from the code');
  });

  it('plans the polling of the tracked subreddits: never-read ones alone, quiet ones grouped once their rates are known, the budget per client', async () => {
    const db = { DATABASE_URL: `sqlite:${path.join(dir, 'plan.db')}`, TRACKED_SUBREDDITS: 'planone,plantwo' };
    const before = await trendhooks(['sources', 'plan', '--json'], db);
    expect(before.code).toBe(0);
    expect(JSON.parse(before.stdout)).toMatchObject({ subreddits: 2, alone: 2, groups: 0, budgetPerMinute: 6, freshnessMs: 60_000 });
    // Their first reads backfill: at most nine pages each beyond the first, from the 4 calls a minute the two listings leave.
    expect(JSON.parse(before.stdout)).toMatchObject({ backfillCalls: 18, backfillMinutes: 4.5 });
    expect((await trendhooks(['sources', 'plan'], db)).stdout).toMatch(/^first-read backfills +at most 18 calls once, about 4\.5 min of the re-read budget$/m);

    const now = Math.floor(Date.now() / 1000);
    const file = path.join(dir, 'plan.ndjson');
    const line = (id: string, sub: string, age: number) => JSON.stringify({ id, subreddit: sub, author: 'someone', title: `title ${id}`, selftext: '', created_utc: now - age, score: 1, num_comments: 0 });
    fs.writeFileSync(file, [line('pa1', 'planone', 600), line('pa2', 'planone', 7200), line('pb1', 'plantwo', 3600)].join('\n') + '\n');
    expect((await trendhooks(['ingest', '--file', file], db)).code).toBe(0);
    const after = await trendhooks(['sources', 'plan', '--json'], { ...db, REDDIT_CLIENTS: 'c1:s1,c2:s2' });
    expect(after.code).toBe(0);
    const plan = JSON.parse(after.stdout);
    expect(plan).toMatchObject({ subreddits: 2, alone: 0, groups: 1, listingCallsPerMinute: 1, budgetPerMinute: 120 });
    expect(plan.units).toEqual([{ subreddits: ['planone', 'plantwo'], posts_per_poll: expect.any(Number) }]);
    const text = await trendhooks(['sources', 'plan'], db);
    expect(text.stdout).toMatch(/^tracked subreddits +2 \(0 never read yet\)$/m);
    expect(text.stdout).not.toMatch(/first-read backfills/);
    expect(text.stdout).toMatch(/^freshness reachable +60 s$/m);
  });

  it('draws no progress bar when stderr is not a terminal, and one when it is', async () => {
    const file = path.join(dir, 'many.ndjson');
    const post = (i: number) => JSON.stringify({ id: `pb${i.toString(36)}`, subreddit: 'progressbar', title: 't', author: 'a_b', created_utc: 1_700_000_000, score: 1, num_comments: 0 });
    fs.writeFileSync(file, Array.from({ length: 1200 }, (_, i) => post(i)).join('\n'));

    const piped = await trendhooks(['ingest', '--file', file, '--json'], sqlite);
    expect(piped).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(piped.stdout)).toMatchObject({ read: 1200, inserted: 1200 });

    // `script` runs the command on a pseudo-terminal (util-linux, present wherever CI runs).
    const tty = await exec('script', ['-qec', `${process.execPath} ${CLI} ingest --file ${file} --json`, '/dev/null'], { env: { ...process.env, ...sqlite } });
    expect(tty.stdout).toMatch(/ingest \[.*\] 100% \| [\d.]+\/[\d.]+ MiB \| 1200 records/);
    expect(tty.stdout).toContain('"updated":1200');
  });
});
