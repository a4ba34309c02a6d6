'use strict';
/**
 * API throughput: requests per second of `GET /v1/webhooks?limit=25` (auth, rate-limit check, keyset
 * page, envelope) against `GET /healthz` of the same process, measured with autocannon in the
 * same run, alternating rounds, medians. The ratio is the figure that matters on a noisy machine.
 *
 * The API is a real `trendhooks serve --role api` process (dist/cli.js) and autocannon runs in this
 * one, so the load generator does not share the server's event loop (in one process the client's
 * own cost capped /healthz and pulled the ratio towards 1).
 *
 *   npx tsc -p tsconfig.build.json && node bench/api/throughput.js [--seconds=5] [--rounds=3] [--connections=20]
 *
 * Writes bench/results/api-throughput.json. PostgreSQL runs in a scratch database that is dropped
 * afterwards; without a server that half is skipped. Fails (exit 1) on any non-2xx answer, socket
 * error or timeout.
 */
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const { DIST, arg, log, median, requireBuild, scratchDatabase, sleep } = require('../lib');

requireBuild('cli.js');
const autocannon = require('autocannon');
const CLI = path.join(DIST, 'cli.js');

const SECONDS = arg('seconds', 5);
const ROUNDS = arg('rounds', 3);
const CONNECTIONS = arg('connections', 20);
const WEBHOOKS = 30;

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function run(url, headers) {
  return new Promise((resolve, reject) => {
    autocannon({ url, headers, connections: CONNECTIONS, duration: SECONDS, pipelining: 1 }, (err, res) => {
      if (err) return reject(err);
      resolve({
        rps: res.requests.average,
        p50: res.latency.p50,
        p99: res.latency.p99,
        non2xx: res.non2xx,
        errors: res.errors,
        timeouts: res.timeouts,
      });
    });
  });
}

/** The API as its own process on `databaseUrl`; resolves once /healthz answers. */
async function startApi(env) {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'serve', '--role', 'api'], {
    env: { ...env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = [];
  child.stdout.on('data', (d) => output.push(String(d)));
  child.stderr.on('data', (d) => output.push(String(d)));
  const base = `http://127.0.0.1:${port}`;
  for (const end = Date.now() + 60_000; ; ) {
    if (child.exitCode !== null) throw new Error(`the API process exited (${child.exitCode}):\n${output.join('')}`);
    const ok = await fetch(`${base}/healthz`).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (Date.now() > end) throw new Error(`the API process did not answer /healthz in 60 s:\n${output.join('')}`);
    await sleep(100);
  }
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  return { base, stop, pid: child.pid, output };
}

async function measure(label, databaseUrl) {
  const env = {
    PATH: process.env.PATH,
    DATABASE_URL: databaseUrl,
    CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdefghijklmnop',
    PLAN_RATE_LIMITS: 'business=100000000',
    SSRF_ALLOW_CIDRS: '127.0.0.1/32',
    LOG_LEVEL: 'warn',
  };
  // Migrates the database and issues the key (the operator command), before the API starts.
  const issued = JSON.parse(execFileSync(process.execPath, [CLI, 'keys', 'create', '--customer', `bench-${Date.now()}`, '--plan', 'business', '--json'], { env, encoding: 'utf8' }));
  const api = await startApi(env);
  const { base } = api;
  try {
    const headers = { authorization: `Bearer ${issued.key}` };
    for (let i = 0; i < WEBHOOKS; i++) {
      const res = await fetch(`${base}/v1/webhooks`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'https://127.0.0.1/bench', event: 'trends.surge', subreddit: `bench${i}x` }),
      });
      if (res.status !== 201) throw new Error(`seeding webhooks: ${res.status} ${await res.text()}`);
    }
    await run(`${base}/healthz`, {}); // warm-up
    await run(`${base}/v1/webhooks?limit=25`, headers);
    const health = [];
    const list = [];
    for (let r = 0; r < ROUNDS; r++) {
      health.push(await run(`${base}/healthz`, {}));
      list.push(await run(`${base}/v1/webhooks?limit=25`, headers));
    }
    const bad = [...health, ...list].reduce((n, x) => n + x.non2xx + x.errors + x.timeouts, 0);
    if (bad > 0) throw new Error(`${bad} failed requests (non-2xx, errors or timeouts): ${JSON.stringify({ health, list })}\n${api.output.join('')}`);
    const result = {
      database: label,
      healthz_rps: Math.round(median(health.map((x) => x.rps))),
      webhooks_list_rps: Math.round(median(list.map((x) => x.rps))),
      webhooks_list_p50_ms: median(list.map((x) => x.p50)),
      webhooks_list_p99_ms: median(list.map((x) => x.p99)),
    };
    result.ratio = Math.round((result.webhooks_list_rps / result.healthz_rps) * 1000) / 1000;
    result.rounds = { healthz_rps: health.map((x) => Math.round(x.rps)), webhooks_list_rps: list.map((x) => Math.round(x.rps)) };
    return result;
  } finally {
    // SIGTERM: the process finishes the requests autocannon left in flight before it closes its pool.
    await api.stop();
  }
}

async function main() {
  const results = [];
  for (const dialect of ['sqlite', 'postgres']) {
    let db;
    try {
      db = await scratchDatabase(dialect);
    } catch (err) {
      log(`PostgreSQL unreachable (${err.message}): its half is skipped`);
      continue;
    }
    try {
      results.push(await measure(dialect, db.url));
    } finally {
      await db.drop();
    }
  }
  console.table(results.map(({ rounds: _rounds, ...r }) => r));
  const out = {
    benchmark: 'api-throughput',
    when: new Date().toISOString(),
    setup: 'API: `node dist/cli.js serve --role api` (own process); load: autocannon in the bench process',
    seconds: SECONDS,
    rounds: ROUNDS,
    connections: CONNECTIONS,
    webhooks_per_page: 25,
    machine: { cpus: os.cpus().length, loadavg_at_end: os.loadavg().map((x) => Math.round(x * 100) / 100), node: process.version },
    results,
  };
  fs.mkdirSync(path.resolve(__dirname, '../results'), { recursive: true });
  fs.writeFileSync(path.resolve(__dirname, '../results/api-throughput.json'), JSON.stringify(out, null, 2) + '\n');
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
