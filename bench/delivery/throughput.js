'use strict';
/**
 * Delivery engine throughput and latency, on SQLite and PostgreSQL, against a local HTTPS
 * receiver (a child process, so it never competes with the worker's event loop):
 *
 *   npm run build && npm run bench:delivery        # or: node bench/delivery/throughput.js [--runs=5] [--concurrency=64] …
 *
 * (a) raw: undici request() POSTs per second to the receiver, same concurrency as the worker,
 *     keep-alive, a delivery-sized body and delivery-like headers — the ceiling for (b).
 * (b) e2e: deliveries per second through trendhooks (createApp, role all). An API-only app
 *     queues `--deliveries` (`--webhooks` subscribers × events, emitted through EventsService)
 *     with no worker running; then the worker's app starts and drains the queue. Rate =
 *     deliveries ÷ (last delivered_at − first attempt's started_at), both from the database,
 *     after checking that every row is delivered and was attempted, and received, exactly once.
 * (c) latency: emit → the receiver has the request, one event at a time with an idle worker.
 *     Role all (in-process wake()) on both databases, and on PostgreSQL an API-only emitter with a
 *     `trendhooks serve --role worker` child woken by LISTEN/NOTIFY. The receiver reports the
 *     arrival time over IPC (wall clock, sub-millisecond).
 *
 * The fan-out of one event to 10,000 webhooks is bench/delivery/fanout.js.
 * Runs (a)–(c) `--runs` times and reports medians (the target machine is a noisy 2-core box).
 * Each e2e figure is bracketed by raw measurements and judged by its ratio to their mean; the
 * verdict is the median of those per-run ratios. CPU time per delivery (this process and the
 * receiver) is printed beside each figure, the steadier number when the machine is busy.
 * Prints a table and writes bench/results/delivery.json (delivery-c<N>.json with a non-default
 * --concurrency). PostgreSQL runs in scratch databases `th_bench_…` that are dropped afterwards;
 * without a server that half is skipped. Options: --runs --webhooks --deliveries --concurrency
 * --samples --warmup --spacing, and --parts=raw,e2e,latency,
 * --dbs=sqlite,postgres, --profile=DIR for profiling one part (a partial run writes no file).
 */
const { execFileSync, fork, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { DIST, arg, log, median, pgUp, requireBuild, scratchDatabase, sleep, writeResult } = require('../lib');

requireBuild('delivery/delivery.worker.js', 'the delivery engine');
const { Agent, request } = require('undici');
const { EVENT_TYPE, eventData, round, startApp: startAppWith, dsOf, seedWebhooks, one } = require('./app');
const { loadConfig } = require(path.join(DIST, 'config/config'));
const { newUlid } = require(path.join(DIST, 'common/ids'));
const { EventsService } = require(path.join(DIST, 'delivery/events.service'));
const { DeliveryWorker } = require(path.join(DIST, 'delivery/delivery.worker'));
const { deliveryId } = require(path.join(DIST, 'delivery/delivery-id'));
const { buildDeliveryBody } = require(path.join(DIST, 'delivery/payload'));
const { generateWebhookSecret } = require(path.join(DIST, 'webhooks/secret'));
const { buildDeliveryHeaders } = require(path.join(DIST, 'delivery/signer'));

const RUNS = arg('runs', 5);
const WEBHOOKS = arg('webhooks', 100);
const DELIVERIES = arg('deliveries', 8000);
const EVENTS = Math.ceil(DELIVERIES / WEBHOOKS);
const SAMPLES = arg('samples', 200);
const WARMUP = arg('warmup', 20);
const SPACING_MS = arg('spacing', 5);
// The worker's default (DELIVERY_CONCURRENCY); the raw baseline uses the same.
const DEFAULT_CONCURRENCY = loadConfig({}).delivery.concurrency;
const CONCURRENCY = arg('concurrency', DEFAULT_CONCURRENCY);
const list = (name, all) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? a.split('=')[1].split(',') : all;
};
// For profiling one part: --parts=e2e --dbs=sqlite
const PARTS = list('parts', ['raw', 'e2e', 'latency']);
const DBS = list('dbs', ['sqlite', 'postgres']);
// --profile=DIR: CPU profile of each e2e drain (worker start → all delivered), for chrome://inspect.
const PROFILE_DIR = process.argv.find((x) => x.startsWith('--profile='))?.split('=')[1];
const TARGETS = { e2e_ratio: { sqlite: 0.5, postgres: 0.35 }, latency_p50_ms: 50, latency_p99_ms: 250 };
const CLI = path.join(DIST, 'cli.js');

const wallMs = () => performance.timeOrigin + performance.now();
function quantiles(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  return { p50_ms: round(q(0.5), 2), p90_ms: round(q(0.9), 2), p99_ms: round(q(0.99), 2), max_ms: round(s[s.length - 1], 2), n: s.length };
}

// ---------------------------------------------------------------------------------------------
// Receiver (child process)

function makeCert(dir) {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
    { stdio: 'ignore' },
  );
  return { key, cert, pem: fs.readFileSync(cert, 'utf8') };
}

async function startReceiver(cert) {
  const child = fork(path.join(__dirname, 'receiver.js'), [cert.key, cert.cert], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
  const arrivals = new Map(); // webhook-id → arrival (ms)
  const waiters = new Map();
  const counts = new Map();
  let seq = 0;
  child.on('message', (m) => {
    if (m.type === 'arrival') {
      const w = waiters.get(m.id);
      if (w) {
        waiters.delete(m.id);
        w(m.at);
      } else arrivals.set(m.id, m.at);
    } else if (m.type === 'count') counts.get(m.seq)?.(m);
  });
  const port = await new Promise((resolve, reject) => {
    child.once('message', (m) => (m.type === 'ready' ? resolve(m.port) : reject(new Error(`receiver: ${JSON.stringify(m)}`))));
    child.once('exit', (code) => reject(new Error(`receiver exited (${code})`)));
  });
  return {
    url: `https://127.0.0.1:${port}/hook`,
    async count() {
      return (await this.stats()).count;
    },
    /** {count, connections, cpuUs}: requests and TLS handshakes since the last reset; the receiver's CPU time so far. */
    stats() {
      const s = ++seq;
      return new Promise((resolve) => {
        counts.set(s, (m) => (counts.delete(s), resolve({ count: m.count, connections: m.connections, cpuUs: m.cpu_us })));
        child.send({ cmd: 'count', seq: s });
      });
    },
    reset: () => child.send({ cmd: 'reset' }),
    report: (on) => {
      arrivals.clear();
      child.send({ cmd: 'report', on });
    },
    arrival(id, timeoutMs = 10_000) {
      if (arrivals.has(id)) {
        const at = arrivals.get(id);
        arrivals.delete(id);
        return Promise.resolve(at);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => (waiters.delete(id), reject(new Error(`no arrival of ${id} within ${timeoutMs} ms`))), timeoutMs);
        waiters.set(id, (at) => (clearTimeout(timer), resolve(at)));
      });
    },
    close: () => new Promise((r) => (child.once('exit', r), child.disconnect())),
  };
}

// ---------------------------------------------------------------------------------------------
// Databases and apps

function benchEnv(caFile) {
  return {
    CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdefghijklmnopqrstuvwxyz',
    SSRF_ALLOW_CIDRS: '127.0.0.1/32',
    DELIVERY_CA_FILE: caFile,
    DELIVERY_CONCURRENCY: String(CONCURRENCY),
  };
}

const startApp = (database, role, caFile) => startAppWith(database, role, benchEnv(caFile));

async function waitFor(what, fn, timeoutMs) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** CPU time per request of this process and of the receiver, from a starting point. */
function cpuMeter(rxBefore) {
  const mine = process.cpuUsage();
  return {
    perItem(rxAfter, n) {
      const d = process.cpuUsage(mine);
      return { cpu_us_per_item: round((d.user + d.system) / n), receiver_cpu_us_per_item: round((rxAfter.cpuUs - rxBefore.cpuUs) / n) };
    },
  };
}

async function startProfile() {
  const { Session } = require('node:inspector');
  const session = new Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
  await post('Profiler.enable');
  await post('Profiler.start');
  return {
    async stop(file) {
      const { profile } = await post('Profiler.stop');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
      log(`profile written to ${file}`);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// (a) raw undici

/** A body and headers exactly like a real delivery's. */
function deliveryLike() {
  const evt = { id: `evt_${newUlid()}`, type: EVENT_TYPE, subreddit: 'benchsub', createdAt: new Date(), data: eventData(0) };
  const webhookId = newUlid();
  const body = buildDeliveryBody(evt, webhookId);
  const headers = buildDeliveryHeaders(deliveryId(evt.id, webhookId), Math.floor(Date.now() / 1000), body, [generateWebhookSecret()]);
  return { body, headers };
}

async function rawThroughput(rx, caPem, total) {
  const { body, headers } = deliveryLike();
  // A fresh pool each run, like the worker's first claim: the TLS handshakes are inside the figure.
  // Capped at the concurrency, as the worker's pool is.
  const agent = new Agent({ connect: { ca: caPem }, keepAliveTimeout: 4000, connections: CONCURRENCY });
  rx.reset();
  let next = 0;
  let ok = 0;
  const cpu = cpuMeter(await rx.stats());
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < total) {
        const res = await request(rx.url, { method: 'POST', headers, body, dispatcher: agent });
        for await (const _ of res.body); // read to the end, as the worker does
        if (res.statusCode === 200) ok++;
      }
    }),
  );
  const ms = performance.now() - t0;
  const after = await rx.stats();
  await agent.close();
  if (ok !== total) throw new Error(`raw: ${ok}/${total} answered 200`);
  return { requests: total, ms: round(ms), per_s: round((total / ms) * 1000), connections: after.connections, ...cpu.perItem(after, total) };
}

// ---------------------------------------------------------------------------------------------
// (b) end to end

async function e2eThroughput(dialect, rx, caFile) {
  const db = await scratchDatabase(dialect);
  // Queued rows are parked a day ahead until the worker's app is up, so neither its start nor the
  // queueing is inside the measurement; then they are made due and the worker is woken.
  const PARK_MS = 86_400_000;
  try {
    const api = await startApp(db.database, 'api', caFile);
    let queued = 0;
    try {
      await seedWebhooks(dsOf(api), WEBHOOKS, rx.url, 'benchsub');
      const events = api.get(EventsService);
      for (let i = 0; i < EVENTS; i++) queued += (await events.emit({ type: EVENT_TYPE, subreddit: 'benchsub', data: eventData(i) })).deliveries;
      await dsOf(api).query(`UPDATE deliveries SET next_attempt_at = next_attempt_at + ${PARK_MS}`);
    } finally {
      await api.close();
    }
    const app = await startApp(db.database, 'all', caFile);
    const ds = dsOf(app);
    try {
      await ds.query(`UPDATE deliveries SET next_attempt_at = next_attempt_at - ${PARK_MS}`);
      rx.reset();
      const profiler = PROFILE_DIR ? await startProfile() : null;
      const cpu = cpuMeter(await rx.stats());
      app.get(DeliveryWorker).wake();
      await waitFor('the receiver to get every delivery', async () => (await rx.count()) >= queued, 180_000);
      await waitFor('every delivery recorded', async () => (await one(ds, "SELECT COUNT(*) AS n FROM deliveries WHERE state = 'delivered'")).n === queued, 30_000);
      const a = await one(ds, 'SELECT MIN(started_at) AS first, COUNT(*) AS n FROM delivery_attempts');
      const d = await one(ds, 'SELECT MAX(delivered_at) AS last FROM deliveries');
      if (a.n !== queued) throw new Error(`${dialect}: ${a.n} attempts for ${queued} deliveries`);
      const received = await rx.stats();
      const cpuPer = cpu.perItem(received, queued);
      if (received.count !== queued) throw new Error(`${dialect}: receiver got ${received.count} requests for ${queued} deliveries`);
      const ms = d.last - a.first;
      if (profiler) await profiler.stop(path.join(PROFILE_DIR, `e2e-${dialect}-${Date.now()}.cpuprofile`));
      return { deliveries: queued, ms, per_s: round((queued / ms) * 1000), connections: received.connections, ...cpuPer };
    } finally {
      await app.close();
    }
  } finally {
    await db.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// (c) emit → arrival

async function sampleLatency(emitter, rx, webhookId, tag) {
  const events = emitter.get(EventsService);
  const out = [];
  rx.report(true);
  try {
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      const id = `evt_lat_${tag}_${i}`;
      const arrived = rx.arrival(deliveryId(id, webhookId));
      const t0 = wallMs();
      await events.emit({ id, type: EVENT_TYPE, subreddit: 'latsub', data: eventData(i) });
      const at = await arrived;
      if (i >= WARMUP) out.push(at - t0);
      await sleep(SPACING_MS); // lets the attempt be recorded: every emit finds an idle worker
    }
  } finally {
    rx.report(false);
  }
  return quantiles(out);
}

async function latencyInProcess(dialect, rx, caFile, tag) {
  const db = await scratchDatabase(dialect);
  try {
    const app = await startApp(db.database, 'all', caFile);
    try {
      const [webhookId] = await seedWebhooks(dsOf(app), 1, rx.url, 'latsub');
      await sleep(200);
      return await sampleLatency(app, rx, webhookId, tag);
    } finally {
      await app.close();
    }
  } finally {
    await db.drop();
  }
}

/** API-only emitter here, `trendhooks serve --role worker` in a child: the wake-up is NOTIFY. */
async function latencyNotify(rx, cert, tag) {
  const db = await scratchDatabase('postgres');
  let worker;
  try {
    const api = await startApp(db.database, 'api', cert.cert);
    try {
      const [webhookId] = await seedWebhooks(dsOf(api), 1, rx.url, 'latsub');
      worker = spawn(process.execPath, [CLI, 'serve', '--role', 'worker'], {
        env: { PATH: process.env.PATH, DATABASE_URL: db.database.url, ...benchEnv(cert.cert) },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise((resolve, reject) => {
        worker.stdout.on('data', (d) => String(d).includes('running') && resolve());
        worker.once('exit', (code) => reject(new Error(`worker exited (${code})`)));
      });
      await sleep(1000); // LISTEN is set up during bootstrap; leave it a moment anyway
      return await sampleLatency(api, rx, webhookId, tag);
    } finally {
      await api.close();
    }
  } finally {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((r) => worker.once('exit', r));
      worker.kill('SIGTERM');
      await exited;
    }
    await db.drop();
  }
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const started = Date.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-bench-cert-'));
  const cert = makeCert(dir);
  const rx = await startReceiver(cert);
  const dialects = DBS.filter((d) => d === 'sqlite' || d === 'postgres');
  if (dialects.includes('postgres') && !(await pgUp())) dialects.pop();
  const runs = { raw: [], e2e: Object.fromEntries(dialects.map((d) => [d, []])), latency: {} };
  const latencyKinds = [...dialects.map((d) => `${d}_in_process`), ...(dialects.includes('postgres') ? ['postgres_notify'] : [])];
  for (const k of latencyKinds) runs.latency[k] = [];
  try {
    log(`receiver on ${rx.url}; concurrency ${CONCURRENCY}; ${RUNS} runs of ${EVENTS * WEBHOOKS} deliveries (${WEBHOOKS} webhooks × ${EVENTS} events)`);
    if (PARTS.includes('raw')) await rawThroughput(rx, cert.pem, 2000); // warm-up: JIT, and the receiver's
    const measureRaw = async (r) => {
      const raw = await rawThroughput(rx, cert.pem, EVENTS * WEBHOOKS);
      runs.raw.push(raw);
      log(`run ${r + 1}: raw ${raw.per_s}/s (${raw.connections} connections; CPU µs per request: here ${raw.cpu_us_per_item}, receiver ${raw.receiver_cpu_us_per_item})`);
      return raw.per_s;
    };
    for (let r = 0; r < RUNS; r++) {
      // Each e2e measurement is bracketed by raw ones and judged against their mean: on a noisy
      // machine the speed drifts within seconds, and this pairs each figure with its own baseline.
      let before = PARTS.includes('raw') ? await measureRaw(r) : null;
      for (const d of PARTS.includes('e2e') ? dialects : []) {
        const e = await e2eThroughput(d, rx, cert.cert);
        const after = PARTS.includes('raw') ? await measureRaw(r) : null;
        if (before !== null) e.ratio_to_raw = round(e.per_s / ((before + after) / 2), 3);
        before = after;
        runs.e2e[d].push(e);
        log(`run ${r + 1}: ${d} e2e ${e.per_s}/s${e.ratio_to_raw ? ` = ${Math.round(e.ratio_to_raw * 100)} % of raw` : ''} (${e.deliveries} in ${e.ms} ms, ${e.connections} connections; CPU µs per delivery: here ${e.cpu_us_per_item}, receiver ${e.receiver_cpu_us_per_item})`);
      }
    }
    for (let r = 0; r < (PARTS.includes('latency') ? RUNS : 0); r++) {
      for (const d of dialects) {
        const l = await latencyInProcess(d, rx, cert.cert, `${d}${r}`);
        runs.latency[`${d}_in_process`].push(l);
        log(`run ${r + 1}: ${d} latency (in-process wake) p50 ${l.p50_ms} p99 ${l.p99_ms} ms`);
      }
      if (dialects.includes('postgres')) {
        const l = await latencyNotify(rx, cert, `notify${r}`);
        runs.latency.postgres_notify.push(l);
        log(`run ${r + 1}: postgres latency (api + worker process, NOTIFY) p50 ${l.p50_ms} p99 ${l.p99_ms} ms`);
      }
    }
  } finally {
    await rx.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }

  const rawMedian = median(runs.raw.map((x) => x.per_s));
  const summary = { raw_per_s: round(rawMedian), e2e: {}, latency: {} };
  const checks = [];
  for (const d of runs.raw.length ? dialects.filter((x) => runs.e2e[x].length) : []) {
    const perS = median(runs.e2e[d].map((x) => x.per_s));
    // The criterion: the median over runs of each run's ratio to its bracketing raw figures.
    const ratio = round(median(runs.e2e[d].map((x) => x.ratio_to_raw)), 3);
    summary.e2e[d] = { per_s: round(perS), ratio_to_raw: ratio, target_ratio: TARGETS.e2e_ratio[d] };
    checks.push(ratio >= TARGETS.e2e_ratio[d]);
  }
  for (const [k, ls] of Object.entries(runs.latency).filter(([, ls]) => ls.length)) {
    const p50 = round(median(ls.map((l) => l.p50_ms)), 2);
    const p99 = round(median(ls.map((l) => l.p99_ms)), 2);
    summary.latency[k] = { p50_ms: p50, p90_ms: round(median(ls.map((l) => l.p90_ms)), 2), p99_ms: p99 };
    checks.push(p50 <= TARGETS.latency_p50_ms && p99 <= TARGETS.latency_p99_ms);
  }
  const out = {
    benchmark: 'delivery',
    generated_at: new Date().toISOString(),
    command: 'npm run build && npm run bench:delivery',
    node: process.version,
    cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}`,
    parameters: { runs: RUNS, concurrency: CONCURRENCY, webhooks: WEBHOOKS, events: EVENTS, deliveries: EVENTS * WEBHOOKS, latency_samples: SAMPLES, latency_warmup: WARMUP, spacing_ms: SPACING_MS },
    targets: TARGETS,
    summary,
    pass: checks.every(Boolean),
    runs,
    duration_s: round((Date.now() - started) / 1000),
  };

  const pad = (s, n) => String(s).padEnd(n);
  const num = (x, n) => String(x).padStart(n);
  console.log(`\nDelivery throughput, medians of ${RUNS} runs; ${EVENTS * WEBHOOKS} deliveries, concurrency ${CONCURRENCY}\n`);
  console.log(`${pad('', 28)}${num('per s', 9)}${num('of raw', 9)}${num('target', 9)}`);
  console.log(`${pad('raw undici', 28)}${num(summary.raw_per_s, 9)}`);
  for (const [d, e] of Object.entries(summary.e2e)) console.log(`${pad(`e2e ${d}`, 28)}${num(e.per_s, 9)}${num(`${Math.round(e.ratio_to_raw * 100)} %`, 9)}${num(`≥ ${e.target_ratio * 100} %`, 9)}`);
  console.log(`\nEmit → arrival (${SAMPLES} samples per run, medians of the runs' quantiles; target p50 ≤ ${TARGETS.latency_p50_ms}, p99 ≤ ${TARGETS.latency_p99_ms} ms)\n`);
  console.log(`${pad('', 28)}${num('p50 ms', 9)}${num('p90 ms', 9)}${num('p99 ms', 9)}`);
  for (const [k, l] of Object.entries(summary.latency)) console.log(`${pad(k, 28)}${num(l.p50_ms, 9)}${num(l.p90_ms, 9)}${num(l.p99_ms, 9)}`);
  console.log(`\ntargets: ${out.pass ? 'met' : 'NOT met'} (${out.duration_s} s)`);

  if (PARTS.length < 3 || dialects.length < 2) return console.log('partial run (--parts/--dbs or no PostgreSQL): results file not written');
  writeResult(CONCURRENCY === DEFAULT_CONCURRENCY ? 'delivery.json' : `delivery-c${CONCURRENCY}.json`, out);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
