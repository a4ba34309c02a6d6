import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { eventBodySchema } from '../src/events/catalogue';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import type { DatabaseConfig } from '../src/database/dialect';
import { testDatabases } from './support/databases';
import { databaseUrl, runCli } from './support/processes';

const CLI = path.resolve(__dirname, '../dist/cli.js');
const KINDS = ['trends.surge', 'trends.velocity', 'trends.rising'] as const;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * `trendhooks demo …args` as a real process (dist/, rebuilt by global-setup when stale), with a
 * TMPDIR of its own so the test can see it cleans up, and no DATABASE_URL unless given.
 */
function demo(args: string[], tmpdir: string, extraEnv: Record<string, string> = {}): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmpdir, ...extraEnv };
  if (!extraEnv.DATABASE_URL) delete env.DATABASE_URL;
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'demo', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

/** Every --json line, each cross-checked with the official Standard Webhooks library. */
function expectThreeVerifiedDeliveries(run: Run, subreddit: string | RegExp): any[] {
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  expect(run.ms).toBeLessThan(60_000);
  const lines = run.stdout.trim().split('\n');
  const deliveries = lines.map((l) => JSON.parse(l)); // stdout carries nothing but the JSON lines
  for (const kind of KINDS) {
    const d = deliveries.find((x) => x.type === kind && x.verified === true);
    expect({ kind, found: Boolean(d) }).toEqual({ kind, found: true });
    // The demo verified with its own node:crypto code; the library must agree on the raw request.
    const body = new Webhook(d.webhook_secret).verify(d.raw.body, d.raw.headers) as any;
    expect(body).toEqual({ type: kind, timestamp: expect.any(String), data: d.data });
    // The real pipeline's body is what the OpenAPI `webhooks` section (the event catalogue) documents.
    const { example: _example, ...schema } = eventBodySchema(kind);
    expect({ kind, valid: ajv.validate(schema, body), errors: ajv.errorsText() }).toEqual({ kind, valid: true, errors: 'No errors' });
    expect(d.raw.headers['webhook-id']).toBe(d.msg_id);
    expect(d.msg_id).toMatch(/^msg_/);
    expect(d.data).toMatchObject({ event_id: d.event_id, webhook_id: d.webhook_id, subreddit: expect.stringMatching(subreddit) });
    expect(d.summary.length).toBeGreaterThan(10);
  }
  const by = (k: string) => deliveries.find((x) => x.type === k).data;
  expect(by('trends.velocity').keyword).toBe('eclipse');
  expect(by('trends.rising').title).toMatch(/ISS/);
  expect(by('trends.surge').count).toBeGreaterThan(by('trends.surge').baseline * 2);
  return deliveries;
}

describe('trendhooks demo', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'th-demo-'));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('--json: delivers and verifies a surge, a keyword spike and a rising post, then cleans up', async () => {
    const run = await demo(['--json'], tmp);
    const deliveries = expectThreeVerifiedDeliveries(run, /^demo$/);
    // The same dataset every run, so the same event ids (they derive from subreddit and window).
    expect(new Set(deliveries.map((d) => d.event_id)).size).toBe(3);
    // The temporary database and certificate are gone.
    expect(fs.readdirSync(tmp)).toEqual([]);
  }, 70_000);

  it('prints one readable line per verified delivery', async () => {
    const run = await demo([], tmp);
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n').filter((l) => l.startsWith('✔ '));
    expect(lines).toHaveLength(3);
    expect(lines.join('\n')).toMatch(/trends\.surge +r\/demo \d+ posts in \d+ min vs [\d.]+ expected \(z=[\d.]+\) — webhook-id msg_\w+, signature verified/);
    expect(lines.join('\n')).toMatch(/trends\.velocity r\/demo "eclipse" in \d+ of \d+ posts/);
    expect(lines.join('\n')).toMatch(/trends\.rising +r\/demo "Caught the ISS/);
    expect(run.stdout).not.toMatch(/✘/);
    expect(fs.readdirSync(tmp)).toEqual([]);
  }, 70_000);

  it('fails with one error line naming what was missing when time runs out', async () => {
    // 50 ms is over before the app has even started (migrations alone take longer), so the
    // replay stops at once and nothing is detected: a failure every time, not a race.
    const run = await demo(['--timeout', '0.05'], tmp);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: no verified delivery of trends\.surge, trends\.velocity, trends\.rising within 0\.05 s \(only 0 of \d+ polls replayed; trends\.surge: no event was detected[^\n]+\)\n$/);
    expect(fs.readdirSync(tmp)).toEqual([]);
  }, 70_000);

  const pg = testDatabases().find(([name]) => name === 'postgres');
  (pg ? it : it.skip)('--database-url: runs on a database of the user\'s and leaves no live webhook or key behind', async () => {
    const db = pg![1]();
    const config = await db.create();
    try {
      const url = config.type === 'postgres' ? config.url : '';
      const run = await demo(['--json', '--database-url', url], tmp);
      expect(run.stderr).toMatch(/^note: the demo uses PostgreSQL [^\n]* \(--database-url\), which holds no other customer[^\n]*\n$/);
      expectThreeVerifiedDeliveries({ ...run, stderr: '' }, /^demo_[0-9a-f]{6}$/);
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        expect((await client.query('SELECT COUNT(*)::int AS n FROM webhooks')).rows[0].n).toBe(0);
        expect((await client.query('SELECT COUNT(*)::int AS n FROM api_keys WHERE revoked_at IS NULL')).rows[0].n).toBe(0);
      } finally {
        await client.end();
      }
    } finally {
      await db.drop();
    }
  }, 70_000);
});


/** Customers, keys and webhooks in a database, read with a connection of the test's own. */
async function contents(config: DatabaseConfig): Promise<{ customers: string[]; keys: number; webhooks: number }> {
  const ds = new DataSource(config.type === 'postgres' ? { type: 'postgres', url: config.url } : { type: 'better-sqlite3', database: config.path });
  await ds.initialize();
  try {
    const customers = ((await ds.query('SELECT name FROM customers ORDER BY name')) as { name: string }[]).map((r) => r.name);
    const n = async (sql: string) => Number((await ds.query(sql))[0].n);
    return { customers, keys: await n('SELECT COUNT(*) AS n FROM api_keys'), webhooks: await n('SELECT COUNT(*) AS n FROM webhooks') };
  } finally {
    await ds.destroy();
  }
}

/** Issue #25 item 3: the demo's relaxed delivery policy never reaches another customer's deliveries. */
describe.each(testDatabases())('trendhooks demo stays in its sandbox on %s', (_name, makeDb) => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'th-demo-'));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('refuses a --database-url that holds another customer, before any worker runs, and leaves it as it was', async () => {
    const db = makeDb();
    const config = await db.create();
    try {
      const url = databaseUrl(config);
      expect((await runCli(['keys', 'create', '--customer', 'acme', '--plan', 'business'], { DATABASE_URL: url })).code).toBe(0);
      const before = await contents(config);
      const run = await demo(['--json', '--database-url', url], tmp);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^error: refusing to run on (SQLite|PostgreSQL) [^\n]*: it holds 1 customer with API keys and 0 webhooks, and the demo's delivery worker [^\n]*\n$/);
      expect(await contents(config)).toEqual(before);
      expect(fs.readdirSync(tmp)).toEqual([]);
    } finally {
      await db.drop();
    }
  }, 120_000);

  it('never uses an exported DATABASE_URL: says so and runs on a temporary SQLite file', async () => {
    const db = makeDb();
    const config = await db.create();
    try {
      const url = databaseUrl(config);
      expect((await runCli(['keys', 'create', '--customer', 'acme', '--plan', 'business'], { DATABASE_URL: url })).code).toBe(0);
      const before = await contents(config);
      const run = await demo(['--json'], tmp, { DATABASE_URL: url });
      expect(run.stderr).toBe('note: the demo runs on a temporary SQLite file, not on DATABASE_URL (name a database with --database-url to use one)\n');
      expectThreeVerifiedDeliveries({ ...run, stderr: '' }, /^demo$/);
      expect(await contents(config)).toEqual(before);
    } finally {
      await db.drop();
    }
  }, 120_000);
});
