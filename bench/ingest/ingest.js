'use strict';
/**
 * `node bench/ingest/ingest.js [--subreddits=1000] [--clients=1] [--scale=10] [--interval=55] [--steady=20] [--outage=10] [--recovery=15] [--history=0]`
 *
 * Coverage of the Reddit poller, against a simulator rather than the internet. A fake Reddit on
 * 127.0.0.1 serves `/r/{a+b+c}/new.json` (one subreddit or a multireddit, `after` paging, no item
 * past the 1,000th), `/by_id/{names}.json`, `/api/v1/access_token`, and rate-limit headers per
 * OAuth client (1,000 queries per 10-minute window, i.e. 100 a minute; 429 past it), plus a few
 * random 429s (Retry-After: 1) and an outage (503 on everything). The population: most subreddits
 * post a few times a day (log-normal, median 4 a day), 1 % are busy and follow the hour-by-hour
 * rate of r/wallstreetbets in ../shared/data/reddit-wsb/ (read at run time; ×1, ×2 or ×4, i.e.
 * up to ~600 posts an hour), each from a random hour.
 *
 * trendhooks' real poller runs in a child process (poller-child.js) against it through
 * REDDIT_BASE_URL and REDDIT_CLIENTS. Time is simulated honestly by scaling: every time constant
 * of the poller and of the fake (poll interval, backoffs, re-read ages, rate windows, the quota per
 * real minute) is divided by --scale, and posts arrive --scale times faster; figures are reported
 * in simulated time. With --history=H, each subreddit already holds H simulated hours of posts at
 * its starting rate, which its first read backfills (up to 1,000 posts). Phases, in simulated minutes: warm-up (every subreddit's first read, alone),
 * --steady minutes measured, a --outage of 503s, --recovery minutes, then a drain.
 *
 * Measures: requests per simulated minute per client (listings, /by_id) against the quota; posts
 * missed (generated, never stored) in steady state and across the outage; p50/p99 delay from a
 * post's creation to its storage; the gap between two reads of a subreddit (its freshness); CPU of
 * the poller process per poll interval per 1,000 subreddits. Writes bench/results/ingest.json.
 */
const { fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { DIST, arg, log, sleep, requireBuild, writeResult } = require('../lib');

const ROOT = path.resolve(__dirname, '../..');
const WSB = path.resolve(ROOT, '../shared/data/reddit-wsb/wsb-2021-01.ndjson');
const N = arg('subreddits', 1000);
const CLIENTS = arg('clients', 1);
const K = arg('scale', 10);
const STEADY = arg('steady', 20);
const OUTAGE = arg('outage', 10);
const RECOVERY = arg('recovery', 15);
/** Simulated hours of posts each subreddit holds before the run (its history, for the first read's backfill). */
const HISTORY_H = arg('history', 0);
const SEED = arg('seed', 7);
/** The poll interval in simulated seconds (REDDIT_POLL_INTERVAL_MS of the run). */
const INTERVAL_S = arg('interval', 55);
const SIM_MIN = 60_000 / K; // real ms in a simulated minute
const QUOTA_WINDOW_MS = 10 * SIM_MIN;
const QUOTA_PER_WINDOW = 1000;

const { rand, gauss, reseed, poisson, FakeReddit, pct, r1 } = require('./sim');
reseed(SEED);

/** Posts per hour of r/wallstreetbets, hour by hour, from the data set (never copied anywhere). */
function wsbHourly() {
  if (!fs.existsSync(WSB)) throw new Error(`${WSB} is missing: the busy end of the population is read from it`);
  const counts = new Map();
  for (const line of fs.readFileSync(WSB, 'utf8').split('\n')) {
    if (!line) continue;
    const h = Math.floor(JSON.parse(line).created_utc / 3600);
    counts.set(h, (counts.get(h) ?? 0) + 1);
  }
  const hours = [...counts.keys()].sort((a, b) => a - b);
  return hours.map((h) => counts.get(h));
}

function population(hourly) {
  const subs = [];
  for (let i = 0; i < N; i++) {
    const name = `sim${i.toString(36).padStart(4, '0')}`;
    if (i % 100 === 0) {
      const mult = [1, 2, 4][Math.floor(rand() * 3)];
      subs.push({ name, busy: true, mult, offset: Math.floor(rand() * hourly.length), posts: [] });
    } else {
      const perDay = Math.min(100, Math.max(0.5, 4 * Math.exp(gauss())));
      subs.push({ name, busy: false, perDay, posts: [] });
    }
  }
  return subs;
}

/** Posts per simulated hour of `s` at simulated time `simMs` since the start. */
function rateOf(s, hourly, simMs) {
  if (!s.busy) return s.perDay / 24;
  return hourly[(s.offset + Math.floor(simMs / 3600_000)) % hourly.length] * s.mult;
}

async function main() {
  requireBuild('trends/reddit/plan.js', 'the multireddit poller');
  const hourly = wsbHourly();
  const subs = population(hourly);
  const fake = new FakeReddit(subs, { windowMs: QUOTA_WINDOW_MS, perWindow: QUOTA_PER_WINDOW });
  const base = await fake.listen();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-ingest-'));
  const dbFile = path.join(dir, 'ingest.db');
  const clients = Array.from({ length: CLIENTS }, (_, i) => `client${i + 1}:secret${i + 1}`).join(',');
  const t0 = Date.now();
  const sim = (real) => ((real - t0) * K); // simulated ms since the start
  const simMin = () => sim(Date.now()) / 60_000;
  if (HISTORY_H > 0) {
    for (const s of subs) {
      const n = poisson(rateOf(s, hourly, 0) * HISTORY_H);
      const spanReal = (HISTORY_H * 3600_000) / K;
      const times = Array.from({ length: n }, () => t0 - 1 - rand() * spanReal).sort((a, b) => a - b);
      for (const created of times) fake.add(s, Math.round(created));
    }
  }

  // Posts arrive from the start: the generator runs every 50 real ms.
  let generating = true;
  let last = Date.now();
  const generated = [];
  const gen = setInterval(() => {
    if (!generating) return;
    const now = Date.now();
    const dtHours = ((now - last) * K) / 3600_000;
    last = now;
    for (const s of subs) {
      const n = poisson(rateOf(s, hourly, sim(now)) * dtHours);
      // Created now: each subreddit's posts stay in (created, id) order, as a listing needs them.
      for (let i = 0; i < n; i++) generated.push(fake.add(s, now));
    }
  }, 50);
  gen.unref();

  log(`ingest bench: ${N} subreddits (${subs.filter((s) => s.busy).length} busy), ${CLIENTS} client(s), time ×${K}, fake Reddit at ${base}`);
  const child = fork(path.join(__dirname, 'poller-child.js'), [], {
    env: {
      ...process.env,
      DATABASE_URL: `sqlite:${dbFile}`,
      REDDIT_BASE_URL: base,
      REDDIT_CLIENTS: clients,
      TRACKED_SUBREDDITS: subs.map((s) => s.name).join(','),
      BENCH_SCALE: String(K),
      BENCH_INTERVAL_MS: String(INTERVAL_S * 1000),
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const ask = (msg, key) => new Promise((resolve) => {
    const on = (m) => {
      if (m && m[key] !== undefined) {
        child.off('message', on);
        resolve(m[key]);
      }
    };
    child.on('message', on);
    if (msg) child.send(msg);
  });
  await ask(null, 'ready');

  // Warm-up: until every subreddit has been listed once, then two more poll intervals.
  const seen = new Set();
  let scanned = 0;
  for (;;) {
    for (; scanned < fake.requests.length; scanned++) for (const s of fake.requests[scanned].subs) seen.add(s);
    if (seen.size >= N) break;
    await sleep(100);
  }
  const warmupMin = simMin();
  const warmupRequests = fake.requests.filter((r) => r.kind !== 'token').length;
  const warmupPagesAfterFirst = fake.requests.filter((r) => r.kind === 'listing' && !r.first).length;
  log(`warm-up: every subreddit read once after ${r1(warmupMin)} simulated min, ${warmupRequests} requests (${warmupPagesAfterFirst} listing pages after a first)`);
  await sleep(2 * SIM_MIN);

  const phase = async (minutes) => {
    const start = { at: Date.now(), req: fake.requests.length, cpu: await ask('cpu', 'cpu') };
    await sleep(minutes * SIM_MIN);
    const end = { at: Date.now(), req: fake.requests.length, cpu: await ask('cpu', 'cpu') };
    return { start, end };
  };
  const steady = await phase(STEADY);
  log(`steady state measured over ${STEADY} simulated min`);
  fake.down = true;
  const outage = await phase(OUTAGE);
  fake.down = false;
  log(`outage of ${OUTAGE} simulated min over`);
  const recovery = await phase(RECOVERY);
  generating = false;
  const genEnd = Date.now();
  await sleep(3 * SIM_MIN); // the drain: the last posts are read
  child.send('stop');
  await ask(null, 'stopped').catch(() => undefined);
  fake.server.close();

  // What was stored, and when.
  const Database = require('better-sqlite3');
  const db = new Database(dbFile, { readonly: true });
  const stored = new Map(db.prepare('SELECT id, first_seen_at FROM posts').all().map((r) => [r.id, Number(r.first_seen_at)]));
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });

  const within = (p, a, b) => p.created >= a && p.created < b;
  const missedIn = (a, b) => generated.filter((p) => within(p, a, b) && !stored.has(p.id)).length;
  const delays = (a, b) => generated.filter((p) => within(p, a, b) && stored.has(p.id)).map((p) => ((stored.get(p.id) - p.created) * K) / 1000);
  // Posts of the steady window's last poll interval are read after the outage began: left out of its delays.
  const steadyDelays = delays(steady.start.at, steady.end.at - SIM_MIN);
  const outageDelays = delays(outage.start.at, outage.end.at);

  const perClient = (ph) => {
    const reqs = fake.requests.slice(ph.start.req, ph.end.req).filter((r) => r.kind !== 'token');
    const minutes = ((ph.end.at - ph.start.at) * K) / 60_000;
    const listing = reqs.filter((r) => r.kind === 'listing');
    return {
      requests_per_min_per_client: r1(reqs.length / minutes / CLIENTS),
      listing_per_min: r1(listing.length / minutes / CLIENTS),
      listing_pages_after_first_per_min: r1(listing.filter((r) => !r.first).length / minutes / CLIENTS),
      by_id_per_min: r1(reqs.filter((r) => r.kind === 'by_id').length / minutes / CLIENTS),
      share_of_quota: Math.round((reqs.length / minutes / CLIENTS / 100) * 1000) / 1000,
      status_429: reqs.filter((r) => r.status === 429).length,
      status_503: reqs.filter((r) => r.status === 503).length,
    };
  };
  // Freshness: gaps between two first-page reads of the same subreddit in steady state.
  const reads = new Map();
  for (const r of fake.requests.slice(steady.start.req, steady.end.req)) {
    if (r.kind !== 'listing' || !r.first) continue;
    for (const s of r.subs) (reads.get(s) ?? reads.set(s, []).get(s)).push(r.at);
  }
  const gaps = [];
  for (const ts of reads.values()) for (let i = 1; i < ts.length; i++) gaps.push(((ts[i] - ts[i - 1]) * K) / 1000);
  const cpuMs = (ph) => (ph.end.cpu.user + ph.end.cpu.system - ph.start.cpu.user - ph.start.cpu.system) / 1000;
  const steadyIntervals = ((steady.end.at - steady.start.at) * K) / 60_000;
  const listingSizes = fake.requests.slice(steady.start.req, steady.end.req).filter((r) => r.kind === 'listing' && r.first).map((r) => r.subs.length);

  // The re-reads of a run this short cover less than the 12 h re-read window and none of the 30
  // days of deletion checks: the plan (the same code as `trendhooks sources plan`) prices the
  // steady state at the population's mean rates, both included.
  const { planUnits, planSummary } = require(path.join(DIST, 'trends/reddit/plan'));
  const meanRates = subs.map((x) => ({ subreddit: x.name, postsPerHour: x.busy ? (hourly.reduce((a, b) => a + b, 0) / hourly.length) * x.mult : x.perDay / 24 }));
  const planOpts = { pollIntervalMs: INTERVAL_S * 1000, maxBatchSubreddits: 100, batchPostsPerPoll: 50, quotaPerMinute: 100, budgetShare: 0.6, clients: CLIENTS, rereadMaxAgeMs: 12 * 3600_000, rereadMinGapMs: 10 * 60_000, retentionMs: 30 * 86_400_000, deletionCheckMs: 40 * 3600_000 };
  const plan = planSummary(planUnits(meanRates, planOpts), meanRates, planOpts);
  const result = {
    bench: 'ingest',
    at: new Date().toISOString(),
    parameters: { poll_interval_s: INTERVAL_S, subreddits: N, busy: subs.filter((s) => s.busy).length, clients: CLIENTS, time_scale: K, steady_min: STEADY, outage_min: OUTAGE, recovery_min: RECOVERY, seed: SEED, quota_per_min: 100 },
    warmup: { simulated_min: r1(warmupMin), requests: warmupRequests, listing_pages_after_first: warmupPagesAfterFirst, history_hours: HISTORY_H },
    posts: {
      generated: generated.length,
      stored: generated.filter((p) => stored.has(p.id)).length,
      missed_steady: missedIn(steady.start.at, steady.end.at),
      missed_during_outage: missedIn(outage.start.at, outage.end.at),
      missed_recovery: missedIn(recovery.start.at, recovery.end.at),
      missed_total: missedIn(0, genEnd + 1),
      per_simulated_hour_steady: r1((generated.filter((p) => within(p, steady.start.at, steady.end.at)).length / STEADY) * 60),
    },
    delay_s: {
      steady: { p50: r1(pct(steadyDelays, 0.5)), p99: r1(pct(steadyDelays, 0.99)), max: r1(pct(steadyDelays, 1)) },
      created_during_outage: { p50: r1(pct(outageDelays, 0.5)), max: r1(pct(outageDelays, 1)) },
    },
    freshness_s: { read_gap_p50: r1(pct(gaps, 0.5)), read_gap_p99: r1(pct(gaps, 0.99)), read_gap_max: r1(pct(gaps, 1)), subreddits_read: reads.size },
    listings: { subreddits_per_listing_median: pct(listingSizes, 0.5), listings_per_poll: r1(listingSizes.length / steadyIntervals) },
    requests: { steady: perClient(steady), outage: perClient(outage), recovery: perClient(recovery) },
    plan_at_mean_rates_with_all_rereads: plan,
    cpu: {
      ms_per_poll_interval_per_1000_subreddits: r1(cpuMs(steady) / steadyIntervals / (N / 1000)),
      share_of_one_core_at_60s_interval_per_1000: Math.round((cpuMs(steady) / steadyIntervals / (N / 1000) / 60_000) * 10000) / 10000,
    },
  };
  const s = result.requests.steady;
  result.targets = {
    subreddits_per_client: N / CLIENTS,
    delay_p99_le_60s: result.delay_s.steady.p99 !== null && result.delay_s.steady.p99 <= 60,
    within_60pct_quota: s.share_of_quota <= 0.6 && plan.quotaShare <= 0.6,
    zero_missed: result.posts.missed_total === 0,
  };
  result.missed = Object.entries(result.targets).filter(([k, v]) => k !== 'subreddits_per_client' && v !== true).map(([k]) => k);
  result.pass = N / CLIENTS >= 1000 && result.missed.length === 0;
  console.log(JSON.stringify(result, null, 2));
  writeResult('ingest.json', result);
  process.exit(process.exitCode ?? 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
