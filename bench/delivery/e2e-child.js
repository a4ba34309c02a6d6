'use strict';
/**
 * The trendhooks process of one end-to-end delivery run (forked by throughput.js): an app of role
 * all (API, worker) on a database already holding the webhooks, alone in its process so that its
 * peak RSS and event-loop blocks are its own.
 *
 *   argv: JSON {database, env}
 *   → parent: {type:'ready'}, {type:'emitted', t0, emit_ms, deliveries, emit_block_ms, emit_block_cpu_ms}, {type:'done', …}, {type:'error', message}
 *   ← parent: {cmd:'go', subreddit, events}, {cmd:'finish', total}, {cmd:'close'}
 *
 * `go` starts the monitor (a 5 ms timer: the longest gap between its ticks is the longest time the
 * loop was held, and the CPU time spent in that gap bounds the part that was not waiting for a
 * core; RSS sampled on each tick, with the heap's figures at its peak), takes the wall clock (t0, the same clock as the
 * receiver's arrivals) and emits `events` events on `subreddit`, one after another.
 * `finish` waits until the database has `total` delivered rows, checks one attempt each, and
 * reports the monitor's figures and the CPU time since `go`. The longest block up to the end of the
 * emit is reported apart: there the fan-out's synchronous writes are what holds the loop, while
 * over the whole run a garbage collection pause may be the longest. On SQLite, the longest single
 * synchronous better-sqlite3 call since `go` (timeSqliteCalls); with `breakdown`, also the wall time
 * summed per SQL text (every statement, nested ones too: BEGIN and COMMIT are statements of their own).
 */
const path = require('node:path');
const { DIST } = require('../lib');
const { EVENT_TYPE, eventData, round, startApp, dsOf, one } = require('./app');
const { EventsService } = require(path.join(DIST, 'delivery/events.service'));

const { database, env, breakdown } = JSON.parse(process.argv[2]);
const wallMs = () => performance.timeOrigin + performance.now();
const MB = 1024 * 1024;

/**
 * SQLite: times every outermost synchronous better-sqlite3 call (a statement, or a transaction
 * with the statements in it), wall clock and the process's CPU time, and keeps the longest. A
 * measuring instrument of the bench only, installed before the app opens its database.
 */
function timeSqliteCalls() {
  const Database = require('better-sqlite3');
  let depth = 0;
  const longest = { wall: 0, cpu: 0, what: null };
  // --sqlite-breakdown: SQL text (or 'all outermost calls') → calls and summed wall ms.
  const sums = breakdown ? new Map() : null;
  const add = (what, ms) => {
    const e = sums.get(what);
    if (e) {
      e.calls++;
      e.ms += ms;
    } else sums.set(what, { calls: 1, ms });
  };
  const timed = (fn) =>
    function (...args) {
      if (depth > 0) {
        if (!sums || this?.source === undefined) return fn.apply(this, args);
        const t = performance.now();
        try {
          return fn.apply(this, args);
        } finally {
          add(this.source, performance.now() - t);
        }
      }
      depth++;
      const t = performance.now();
      const c = process.cpuUsage();
      try {
        return fn.apply(this, args);
      } finally {
        depth--;
        const wall = performance.now() - t;
        if (sums) {
          add('all outermost calls', wall);
          if (this?.source !== undefined) add(this.source, wall);
        }
        if (wall > longest.cpu) {
          const d = process.cpuUsage(c);
          longest.wall = Math.max(longest.wall, wall);
          const cpu = Math.min(wall, (d.user + d.system) / 1000);
          if (cpu > longest.cpu) {
            longest.cpu = cpu;
            // Which call: the statement's SQL, or where the transaction was run from.
            longest.what = this?.source ?? new Error().stack.split('\n').slice(2, 4).map((l) => l.trim().replace(/^at /, '').replace(/\(.*[\\/]/, '(')).join(' < ');
          }
        }
      }
    };
  const probe = new Database(':memory:');
  const Statement = Object.getPrototypeOf(probe.prepare('SELECT 1'));
  probe.close();
  for (const m of ['run', 'get', 'all']) Statement[m] = timed(Statement[m]);
  for (const m of ['exec', 'pragma']) Database.prototype[m] = timed(Database.prototype[m]);
  const transaction = Database.prototype.transaction;
  Database.prototype.transaction = function (fn) {
    const tx = transaction.call(this, fn);
    const wrapped = timed(tx);
    for (const k of ['deferred', 'immediate', 'exclusive']) wrapped[k] = timed(tx[k]);
    return wrapped;
  };
  return {
    reset: () => ((longest.wall = longest.cpu = 0), (longest.what = null), sums?.clear()),
    /** The summed times, longest first: [{ sql, calls, ms }]. */
    breakdown: () => (sums ? [...sums].map(([sql, e]) => ({ sql, calls: e.calls, ms: round(e.ms, 1) })).sort((a, b) => b.ms - a.ms) : null),
    get: () => ({ wall: round(longest.wall, 1), cpu: round(longest.cpu, 1), what: longest.what }),
  };
}

/**
 * CPU time (µs) of the main thread alone, from /proc (10 ms ticks: fine over a run of seconds),
 * null elsewhere. process.cpuUsage() counts every thread of the process, a WAL checkpointer's too:
 * this one is what the event loop itself spent.
 */
function mainThreadCpuUs() {
  try {
    const stat = require('node:fs').readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 (utime, stime) of stat(5), counted from the state field (3).
    return ((Number(f[11]) + Number(f[12])) * 1e6) / 100;
  } catch {
    return null;
  }
}

function monitor() {
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let longest = 0;
  let longestCpu = 0;
  let peakRss = 0;
  let atPeak = null;
  const tick = setInterval(() => {
    const t = performance.now();
    const cpu = process.cpuUsage();
    const gap = t - last;
    longest = Math.max(longest, gap);
    // On a loaded machine a gap also holds the time this process waited for a core: the CPU time
    // spent in it bounds the part that was this process's own work.
    longestCpu = Math.max(longestCpu, Math.min(gap, (cpu.user + cpu.system - lastCpu.user - lastCpu.system) / 1000));
    last = t;
    lastCpu = cpu;
    const rss = process.memoryUsage.rss();
    if (rss > peakRss) {
      peakRss = rss;
      atPeak = process.memoryUsage();
    }
  }, 5);
  return {
    /** The longest block so far (the emit's, when asked right after it). */
    sofar: () => ({ longest_block_ms: round(Math.max(0, longest - 5), 1), longest_block_cpu_ms: round(Math.max(0, longestCpu - 5), 1) }),
    stop() {
      clearInterval(tick);
      // A gap includes the timer's own 5 ms period.
      return {
        longest_block_ms: round(Math.max(0, longest - 5), 1),
        longest_block_cpu_ms: round(Math.max(0, longestCpu - 5), 1),
        peak_sampled_rss_mb: round(peakRss / MB, 1),
        at_peak_mb: { heap_used: round(atPeak.heapUsed / MB, 1), heap_total: round(atPeak.heapTotal / MB, 1), external: round(atPeak.external / MB, 1), array_buffers: round(atPeak.arrayBuffers / MB, 1) },
      };
    },
  };
}

async function main() {
  const sqliteCalls = database.type === 'sqlite' ? timeSqliteCalls() : null;
  const app = await startApp(database, 'all', env);
  const ds = dsOf(app);
  let mon;
  let cpu;
  let mainCpu;
  process.on('message', async (m) => {
    try {
      if (m.cmd === 'go') {
        mon = monitor();
        sqliteCalls?.reset();
        cpu = process.cpuUsage();
        mainCpu = mainThreadCpuUs();
        await new Promise((r) => setTimeout(r, 20)); // the monitor's first ticks
        const events = app.get(EventsService);
        const t0 = wallMs();
        let deliveries = 0;
        for (let i = 0; i < m.events; i++) deliveries += (await events.emit({ type: EVENT_TYPE, subreddit: m.subreddit, data: eventData(i) })).deliveries;
        const emitMs = round(wallMs() - t0);
        await new Promise((r) => setTimeout(r, 6)); // the tick after the emit's last slice
        const b = mon.sofar();
        process.send({ type: 'emitted', t0, emit_ms: emitMs, deliveries, emit_block_ms: b.longest_block_ms, emit_block_cpu_ms: b.longest_block_cpu_ms });
      } else if (m.cmd === 'finish') {
        const end = Date.now() + 60_000;
        while ((await one(ds, "SELECT COUNT(*) AS n FROM deliveries WHERE state = 'delivered'")).n < m.total) {
          if (Date.now() > end) throw new Error('timed out waiting for every delivery to be recorded');
          await new Promise((r) => setTimeout(r, 25));
        }
        const figures = mon.stop();
        const c = process.cpuUsage(cpu);
        const main = mainThreadCpuUs();
        const a = await one(ds, 'SELECT COUNT(*) AS n, COUNT(DISTINCT delivery_id) AS d FROM delivery_attempts');
        if (a.n !== m.total || a.d !== m.total) throw new Error(`${a.n} attempts of ${a.d} deliveries for ${m.total} deliveries`);
        const ru = process.resourceUsage();
        process.send({ type: 'done', ...figures, longest_sqlite_call_ms: sqliteCalls?.get() ?? null, sqlite_breakdown: sqliteCalls?.breakdown() ?? null, max_rss_mb: round(ru.maxRSS / 1024, 1), cpu_us: c.user + c.system, main_thread_cpu_us: main === null ? null : main - mainCpu });
      } else if (m.cmd === 'close') {
        await app.close();
        process.exit(0);
      }
    } catch (err) {
      process.send({ type: 'error', message: err.stack ?? String(err) });
    }
  });
  process.on('disconnect', () => process.exit(1)); // the bench died: never outlive it
  process.send({ type: 'ready' });
}

main().catch((err) => {
  process.send?.({ type: 'error', message: err.stack ?? String(err) });
  process.exit(1);
});
