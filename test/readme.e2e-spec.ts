import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { EVENT_CATALOGUE } from '../src/events/catalogue';

/**
 * The README's quick start and walk-through, run as written, so they cannot rot. Each runs with
 * bash in a scratch folder shaped like a clone after `npm ci` (package.json, bin/, and this
 * checkout's node_modules/ and dist/), so its ./data database is a scratch one; only the ports are
 * changed (8080, through PORT and in the URLs, and 9443 to free ones), since other suites run alongside. SQLite: the blocks use the
 * default database.
 */
const ROOT = path.resolve(__dirname, '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The ```sh blocks of the section whose heading starts with `heading`. */
function shellBlocks(heading: string): string[] {
  const start = README.indexOf(`\n## ${heading}`);
  if (start < 0) throw new Error(`README has no "## ${heading}" section`);
  const next = README.indexOf('\n## ', start + 4);
  const section = README.slice(start, next < 0 ? undefined : next);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
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

  it('quick start: npm start serves the API on the port it names', async () => {
    const [block] = shellBlocks('Quick start');
    const lines = block.split('\n').filter((l) => l.trim() && !l.startsWith('#'));
    expect(lines.map((l) => l.replace(/\s*#.*$/, ''))).toEqual(['npm ci', 'npm start']);
    const port = await freePort();
    const dir = scratchClone();
    dirs.push(dir);
    // `npm ci` already ran for this checkout (the scratch folder borrows its node_modules/ and dist/).
    const script = block.replace(/^npm ci\b.*$/m, '').replace(/8080/g, String(port)).replace(/^npm start\b.*$/m, 'npm start > start.log 2>&1 &'); // it serves until stopped
    const ran = await runBash(
      `${script}\nuntil curl -sf http://127.0.0.1:${port}/healthz; do sleep 0.5; done\ncurl -sf http://127.0.0.1:${port}/readyz\nkill %1; wait %1 || true`,
      dir,
      90_000,
      { PORT: String(port) },
    );
    expect({ code: ran.code, out: ran.out }).toEqual({ code: 0, out: expect.stringContaining('{"status":"ok","checks":{"database":"up"}}') });
    expect(fs.existsSync(path.join(dir, 'data/trendhooks.db'))).toBe(true);
  }, 120_000);

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
    expect(ran.out).toMatch(/204\n/); // the DELETE, after the deliveries page (no newline at its end)
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
