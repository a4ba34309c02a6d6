'use strict';
/**
 * `node bench/ingest/outage.js [--warmup=1.5] [--window=5] [--outage-at=1] [--outage=2] [--tail=3] [--scale=10] [--interval=55] [--seed=7]`
 *
 * A cold start, hot subreddits and a Reddit outage in one run (issue 43), against the simulated
 * Reddit of sim.js with Reddit's quota (1,000 requests per 10 minutes for the one OAuth client,
 * every request counted, 503s included). 1,000 tracked subreddits: 2 at 120 posts a minute, 8 at 4
 * a minute, 90 at 6 an hour, 900 at 4 a day; none read before, so the run starts with 1,000 first
 * reads. After --warmup simulated minutes a --window of measurement starts; --outage-at minutes
 * into it Reddit answers 503 to everything for --outage minutes; after the window, --tail minutes
 * more (posts keep coming) let the last posts be read. Time is scaled as in ingest.js.
 *
 * Reports, for the posts created in the window: requests a minute in the window, posts never
 * listed, posts not stored, p99 creation → first listed, p99 creation → stored outside the
 * outage (by creation time; and clear of it: not created in the poll interval before it either,
 * those are read only once Reddit is back); and over the run, the most requests a minute averaged over any 10 minutes, during the
 * cold start (the 10 minutes overlap it) and outside it. Writes bench/results/ingest-outage.json
 * (or --out=name.json).
 */
const { fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { arg, log, sleep, requireBuild, writeResult } = require('../lib');
const { reseed, poisson, FakeReddit, pct, r1 } = require('./sim');

const K = arg('scale', 10);
const WARMUP = arg('warmup', 1.5);
const WINDOW = arg('window', 5);
const OUTAGE_AT = arg('outage-at', 1);
const OUTAGE = arg('outage', 2);
const TAIL = arg('tail', 3);
const INTERVAL_S = arg('interval', 55);
const OUT = (process.argv.find((a) => a.startsWith('--out=')) ?? '--out=ingest-outage.json').slice(6);
const SIM_MIN = 60_000 / K;
const QUOTA_PER_MIN = 100;
reseed(arg('seed', 7));

/** Posts per simulated hour, by subreddit. */
function population() {
  const shape = [[2, 120 * 60], [8, 4 * 60], [90, 6], [900, 4 / 24]];
  const subs = [];
  for (const [n, perHour] of shape) for (let i = 0; i < n; i++) subs.push({ name: `out${subs.length.toString(36).padStart(4, '0')}`, perHour, posts: [] });
  return subs;
}

/** The most requests a simulated minute over any 10 simulated minutes whose span meets `keep`. */
function worst10(times, from, to, keep) {
  let most = null;
  for (let a = from; a + 10 * SIM_MIN <= to; a += SIM_MIN / 6) {
    if (!keep(a, a + 10 * SIM_MIN)) continue;
    const n = times.filter((t) => t >= a && t < a + 10 * SIM_MIN).length;
    most = Math.max(most ?? 0, n / 10);
  }
  return most === null ? null : r1(most);
}

async function main() {
  requireBuild('trends/reddit/plan.js', 'the multireddit poller');
  const subs = population();
  const fake = new FakeReddit(subs, { windowMs: 10 * SIM_MIN, perWindow: QUOTA_PER_MIN * 10, random429: 0 });
  const base = await fake.listen();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-outage-'));
  const dbFile = path.join(dir, 'ingest.db');
  log(`ingest outage bench: ${subs.length} subreddits, time ×${K}, fake Reddit at ${base}`);
  const child = fork(path.join(__dirname, 'poller-child.js'), [], {
    env: {
      ...process.env,
      DATABASE_URL: `sqlite:${dbFile}`,
      REDDIT_BASE_URL: base,
      REDDIT_CLIENTS: 'client1:secret1',
      TRACKED_SUBREDDITS: subs.map((s) => s.name).join(','),
      BENCH_SCALE: String(K),
      BENCH_INTERVAL_MS: String(INTERVAL_S * 1000),
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const message = (key) => new Promise((resolve) => child.on('message', (m) => m && m[key] !== undefined && resolve(m[key])));
  await message('ready');

  // Posts from the start, created at their due times.
  const t0 = Date.now();
  const generated = [];
  let last = t0;
  const gen = setInterval(() => {
    const now = Date.now();
    const hours = ((now - last) * K) / 3600_000;
    for (const s of subs) for (let i = poisson(s.perHour * hours); i > 0; i--) generated.push(fake.add(s, last + Math.random() * (now - last)));
    for (const s of subs) s.posts.sort((a, b) => a.created - b.created || (a.id < b.id ? -1 : 1));
    last = now;
  }, 50);

  // The cold start ends when every subreddit was listed once.
  let coldEnd = null;
  const listedSubs = new Set();
  let scanned = 0;
  const watch = setInterval(() => {
    for (; scanned < fake.requests.length; scanned++) if (fake.requests[scanned].kind === 'listing' && fake.requests[scanned].status === 200) for (const x of fake.requests[scanned].subs) listedSubs.add(x);
    if (coldEnd === null && listedSubs.size >= subs.length) coldEnd = Date.now();
  }, 200);

  await sleep(WARMUP * SIM_MIN);
  const w0 = Date.now();
  await sleep(OUTAGE_AT * SIM_MIN);
  const o0 = Date.now();
  fake.down = true;
  await sleep(OUTAGE * SIM_MIN);
  fake.down = false;
  const o1 = Date.now();
  await sleep((WINDOW - OUTAGE_AT - OUTAGE) * SIM_MIN);
  const w1 = Date.now();
  await sleep(TAIL * SIM_MIN);
  clearInterval(gen);
  clearInterval(watch);
  const end = Date.now();
  child.send('stop');
  await message('stopped');
  fake.server.close();

  const Database = require('better-sqlite3');
  const db = new Database(dbFile, { readonly: true });
  const stored = new Map(db.prepare('SELECT id, first_seen_at FROM posts').all().map((r) => [r.id, Number(r.first_seen_at)]));
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });

  const sim = (ms) => (ms * K) / 1000; // real ms → simulated s
  const inWindow = generated.filter((p) => p.created >= w0 && p.created < w1);
  const outsideOutage = inWindow.filter((p) => p.created < o0 || p.created >= o1);
  // Posts created in the poll interval before the outage are read only after it: their delay is the outage's.
  const clearOfOutage = inWindow.filter((p) => p.created < o0 - (INTERVAL_S * 1000) / K || p.created >= o1);
  const api = fake.requests.filter((r) => r.kind !== 'token');
  const times = api.map((r) => r.at);
  const coldStartEnd = coldEnd ?? end;
  const result = {
    bench: 'ingest-outage',
    at: new Date().toISOString(),
    command: `node bench/ingest/outage.js ${process.argv.slice(2).join(' ')}`.trim(),
    parameters: { subreddits: subs.length, shape: '2 at 120/min, 8 at 4/min, 90 at 6/h, 900 at 4/day', clients: 1, quota_per_min: QUOTA_PER_MIN, time_scale: K, poll_interval_s: INTERVAL_S, warmup_min: WARMUP, window_min: WINDOW, outage_min: OUTAGE, outage_from_window_min: OUTAGE_AT, tail_min: TAIL },
    cold_start_min: coldEnd === null ? null : r1((coldEnd - t0) / SIM_MIN),
    window: {
      requests_per_min: r1(api.filter((r) => r.at >= w0 && r.at < w1).length / WINDOW),
      posts_created: inWindow.length,
      never_listed: inWindow.filter((p) => !p.listedAt).length,
      not_stored: inWindow.filter((p) => !stored.has(p.id)).length,
      p99_created_to_listed_s: r1(pct(inWindow.filter((p) => p.listedAt).map((p) => sim(p.listedAt - p.created)), 0.99)),
      p99_created_to_stored_outside_outage_s: r1(pct(outsideOutage.filter((p) => stored.has(p.id)).map((p) => sim(stored.get(p.id) - p.created)), 0.99)),
      p99_created_to_stored_clear_of_outage_s: r1(pct(clearOfOutage.filter((p) => stored.has(p.id)).map((p) => sim(stored.get(p.id) - p.created)), 0.99)),
      status_429: api.filter((r) => r.at >= w0 && r.at < w1 && r.status === 429).length,
      status_503: api.filter((r) => r.at >= w0 && r.at < w1 && r.status === 503).length,
    },
    run: {
      posts_created: generated.length,
      never_listed: generated.filter((p) => !p.listedAt && p.created < w1).length,
      requests: api.length,
      status_429: api.filter((r) => r.status === 429).length,
      max_requests_per_min_over_10_min_during_cold_start: worst10(times, t0, end, (a) => a < coldStartEnd),
      max_requests_per_min_over_10_min_outside_cold_start: worst10(times, t0, end, (a) => a >= coldStartEnd),
    },
  };
  const w = result.window;
  result.targets = {
    zero_missed: w.never_listed === 0 && w.not_stored === 0,
    cold_start_le_100pct: (result.run.max_requests_per_min_over_10_min_during_cold_start ?? 0) <= QUOTA_PER_MIN,
    outside_cold_start_le_60pct: result.run.max_requests_per_min_over_10_min_outside_cold_start === null ? null : result.run.max_requests_per_min_over_10_min_outside_cold_start <= 0.6 * QUOTA_PER_MIN,
    p99_stored_le_75s_outside_outage: w.p99_created_to_stored_outside_outage_s !== null && w.p99_created_to_stored_outside_outage_s <= 75,
  };
  result.missed = Object.entries(result.targets).filter(([, v]) => v === false).map(([k]) => k);
  result.pass = result.missed.length === 0;
  console.log(JSON.stringify(result, null, 2));
  writeResult(OUT, result);
  process.exit(process.exitCode ?? 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
