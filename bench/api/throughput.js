'use strict';
/**
 * API throughput: requests per second of `GET /v1/webhooks?limit=25` (auth, rate-limit check, keyset
 * page, envelope) against `GET /healthz` of the same process, measured with autocannon in the
 * same run, alternating rounds, medians. The ratio is the figure that matters on a noisy machine.
 *
 *   npm run build && node bench/api/throughput.js [--seconds=5] [--rounds=3] [--connections=20]
 *
 * Writes bench/results/api-throughput.json. PostgreSQL runs in a scratch database that is dropped
 * afterwards; without a server that half is skipped.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const DIST = path.resolve(__dirname, '../../dist');
if (!fs.existsSync(path.join(DIST, 'app.js'))) {
  console.error('dist/ is missing: run `npm run build` first');
  process.exit(1);
}
require('reflect-metadata');
const autocannon = require('autocannon');
const { Client } = require('pg');
const { createApp } = require(path.join(DIST, 'app'));
const { loadConfig } = require(path.join(DIST, 'config/config'));
const { ApiKeyService } = require(path.join(DIST, 'auth/api-key.service'));
const { StaticDnsResolver } = require(path.join(DIST, 'ssrf/resolver'));

const arg = (name, def) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.split('=')[1]) : def;
};
const SECONDS = arg('seconds', 5);
const ROUNDS = arg('rounds', 3);
const CONNECTIONS = arg('connections', 20);
const PG_ADMIN = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function run(url, headers) {
  return new Promise((resolve, reject) => {
    autocannon({ url, headers, connections: CONNECTIONS, duration: SECONDS, pipelining: 1 }, (err, res) => {
      if (err) return reject(err);
      resolve({ rps: res.requests.average, p50: res.latency.p50, p99: res.latency.p99, non2xx: res.non2xx, errors: res.errors });
    });
  });
}

async function measure(label, database) {
  const config = loadConfig({
    CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdefghijklmnop',
    PLAN_RATE_LIMITS: 'business=100000000',
  });
  config.database = database;
  const app = await createApp(config, { role: 'api', logger: ['error'], resolver: new StaticDnsResolver({ 'hooks.example.com': ['93.184.216.34'] }) });
  await app.listen(0, '127.0.0.1');
  const base = await app.getUrl();
  try {
    const issued = await app.get(ApiKeyService).issue(`bench-${Date.now()}`, 'business');
    const headers = { authorization: `Bearer ${issued.key}` };
    for (let i = 0; i < 30; i++) {
      const res = await fetch(`${base}/v1/webhooks`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'https://hooks.example.com/x', event: 'trends.surge', subreddit: `bench${i}x` }),
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
    const bad = list.reduce((n, x) => n + x.non2xx + x.errors, 0);
    if (bad > 0) throw new Error(`${bad} failed requests on /v1/webhooks`);
    const result = {
      database: label,
      healthz_rps: Math.round(median(health.map((x) => x.rps))),
      webhooks_list_rps: Math.round(median(list.map((x) => x.rps))),
      webhooks_list_p50_ms: median(list.map((x) => x.p50)),
      webhooks_list_p99_ms: median(list.map((x) => x.p99)),
    };
    result.ratio = Math.round((result.webhooks_list_rps / result.healthz_rps) * 1000) / 1000;
    return result;
  } finally {
    await app.close();
  }
}

async function main() {
  const results = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-bench-api-'));
  try {
    results.push(await measure('sqlite', { type: 'sqlite', path: path.join(dir, 'bench.db') }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const admin = new Client({ connectionString: PG_ADMIN });
  let pg = true;
  await admin.connect().catch(() => (pg = false));
  if (pg) {
    const db = `th_bench_api_${process.pid}`;
    await admin.query(`CREATE DATABASE ${db}`);
    try {
      const url = new URL(PG_ADMIN);
      url.pathname = `/${db}`;
      results.push(await measure('postgres', { type: 'postgres', url: url.toString() }));
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      await admin.end();
    }
  } else {
    console.warn('PostgreSQL unreachable: its half is skipped');
  }
  console.table(results);
  const out = { benchmark: 'api-throughput', when: new Date().toISOString(), seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS, results };
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
