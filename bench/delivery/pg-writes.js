'use strict';
/**
 * What one delivery costs PostgreSQL: row writes (pg_stat_user_tables: inserts, updates, HOT
 * updates per table) and round trips (every query this process sends, by statement), over a run
 * that emits `--events` events to `--webhooks` subscribers each with the worker running
 * (role all), against a local HTTPS receiver (bench/delivery/receiver.js).
 *
 *   npm run build && node bench/delivery/pg-writes.js [--webhooks=100] [--events=100] [--light=1]
 *
 * --light=1: light load instead: each event waits for its deliveries to be recorded before the
 * next is emitted (with --webhooks=1: the emit → attempt path of the latency benchmark).
 * The bench's own polling of the deliveries table is left out of the round trips.
 * Prints a table; writes nothing. The scratch database `th_bench_…` is dropped afterwards.
 */
const { execFileSync, fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');

const { DIST, arg, log, pgAdmin, pgServerCpu, pgUp, requireBuild, scratchDatabase, sleep } = require('../lib');

requireBuild('delivery/delivery.worker.js', 'the delivery engine');
const { EVENT_TYPE, eventData, round, startApp, dsOf, seedWebhooks } = require('./app');
const { EventsService } = require(path.join(DIST, 'delivery/events.service'));

const WEBHOOKS = arg('webhooks', 100);
const EVENTS = arg('events', 100);
const LIGHT = arg('light', 0) === 1;
const POLL = "SELECT COUNT(*)::int AS n FROM deliveries WHERE state = 'delivered'";
const WAL_STATS = 'SELECT wal_records::bigint AS records, wal_fpi::bigint AS fpi, wal_bytes::bigint AS bytes FROM pg_stat_wal';

/** The server's WAL counters (PostgreSQL 14+). */
async function walStats() {
  const [r] = await pgAdmin(WAL_STATS);
  return { records: Number(r.records), fpi: Number(r.fpi), bytes: Number(r.bytes) };
}

/** Counts every query sent by this process's pg clients, by prepared-statement name or leading text. */
function countRoundTrips() {
  const counts = new Map();
  const original = Client.prototype.query;
  Client.prototype.query = function (config, ...rest) {
    const label = typeof config === 'string' ? config : config && (config.name ?? config.text);
    const key = String(label ?? '?').replace(/\s+/g, ' ').slice(0, 60);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return original.call(this, config, ...rest);
  };
  return {
    counts,
    reset: () => counts.clear(),
    restore: () => (Client.prototype.query = original),
  };
}

async function main() {
  if (!(await pgUp())) process.exit(1);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-bench-cert-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], {
    stdio: 'ignore',
  });
  const rx = fork(path.join(__dirname, 'receiver.js'), [key, cert], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
  const port = await new Promise((resolve) => rx.once('message', (m) => resolve(m.port)));
  const url = `https://127.0.0.1:${port}/hook`;
  const db = await scratchDatabase('postgres');
  const trips = countRoundTrips();
  const total = WEBHOOKS * EVENTS;
  try {
    const env = { CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdefghijklmnopqrstuvwxyz', SSRF_ALLOW_CIDRS: '127.0.0.1/32', DELIVERY_CA_FILE: cert };
    const app = await startApp(db.database, 'all', env);
    try {
      const ds = dsOf(app);
      const delivered = async (n, pollMs) => {
        while ((await ds.query(POLL))[0].n < n) await sleep(pollMs);
      };
      await seedWebhooks(ds, WEBHOOKS, url, 'benchsub');
      trips.reset();
      const events = app.get(EventsService);
      const walBefore = await walStats();
      const server = pgServerCpu(db.name);
      const t0 = performance.now();
      let emitTrips = 0;
      for (let i = 0; i < EVENTS; i++) {
        const before = [...trips.counts.values()].reduce((a, b) => a + b, 0);
        const e = events.emit({ type: EVENT_TYPE, subreddit: 'benchsub', data: eventData(i) });
        // The emit's own round trips: those sent before its first await settles are the emit's alone
        // only when nothing else runs, so they are counted by statement below instead.
        await e;
        emitTrips += [...trips.counts.values()].reduce((a, b) => a + b, 0) - before;
        if (LIGHT) await delivered((i + 1) * WEBHOOKS, 1);
      }
      log(`emitted ${EVENTS} events in ${round(performance.now() - t0)} ms`);
      await delivered(total, 50);
      const ms = performance.now() - t0;
      log(`${total} deliveries (${WEBHOOKS} webhooks × ${EVENTS} events) delivered in ${round(ms)} ms from the first emit`);
      log(`(round trips while emitting, worker's and polling included: ${emitTrips})`);
      const serverUs = server.stop();
      const wal = await walStats();
      const per = (k) => round((wal[k] - walBefore[k]) / total, 2);
      if (serverUs !== null) log(`PostgreSQL server CPU (this database's backends, polling included): ${round(serverUs / total)} µs per delivery`);
      log(`WAL per delivery (pg_stat_wal: the whole server, other databases' writes included): ${per('bytes')} bytes, ${per('records')} records, ${per('fpi')} full-page images`);
    } finally {
      await app.close();
    }
    trips.restore();
    // Closed sessions have flushed their statistics; a fresh one reads them.
    await sleep(500);
    const c = new Client({ connectionString: db.url });
    await c.connect();
    const rows = (
      await c.query(
        `SELECT relname, n_tup_ins::int AS ins, n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot, n_tup_del::int AS del
         FROM pg_stat_user_tables WHERE relname IN ('events', 'deliveries', 'delivery_attempts', 'webhooks') ORDER BY relname`,
      )
    ).rows;
    await c.end();
    let writes = 0;
    console.log(`\nrow writes over ${total} deliveries (webhooks: the seed's ${WEBHOOKS} inserts left out)`);
    console.log('table              inserts   updates (HOT)   deletes   per delivery');
    for (const r of rows) {
      const ins = r.relname === 'webhooks' ? r.ins - WEBHOOKS : r.ins;
      const w = ins + r.upd + r.del;
      writes += w;
      console.log(`${r.relname.padEnd(18)} ${String(ins).padStart(7)} ${String(r.upd).padStart(9)} (${r.hot}) ${String(r.del).padStart(9)}   ${round(w / total, 3)}`);
    }
    console.log(`total row writes per delivery: ${round(writes / total, 3)}`);
    const all = [...trips.counts.entries()].filter(([k]) => !POLL.startsWith(k) && !WAL_STATS.startsWith(k)).sort((a, b) => b[1] - a[1]);
    const sum = all.reduce((a, [, n]) => a + n, 0);
    console.log(`\nround trips from the first emit to the last outcome: ${sum} (${round(sum / total, 3)} per delivery)`);
    for (const [k, n] of all) console.log(`${String(n).padStart(7)}  ${k}`);
  } finally {
    trips.restore();
    await db.drop();
    rx.disconnect();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
