'use strict';
/**
 * Fan-out: EventsService.emit of one event to `--webhooks` subscribed webhooks (10,000, inserted in
 * bulk beside 200 on another subreddit), on SQLite and PostgreSQL, in an API-only app so no worker
 * drains the rows beside the measurement; then the replay of the same event id (creates nothing).
 *
 *   npm run build && npm run bench:fanout        # or: node bench/delivery/fanout.js [--samples=7] [--webhooks=10000]
 *
 * Baseline, measured in the same run on the same database: the same pending delivery rows written
 * by the database alone — an events row and one INSERT … SELECT from the subscriptions table in one
 * transaction, ids made in SQL — the floor any fan-out pays for the rows and their indexes. Each
 * emit is paired with a baseline measured beside it (their order alternates, so neither always
 * meets the larger table) and the figure is the median of the pairs' ratios; times are medians
 * with min–max. The requirement, one event to 10,000 webhooks well under a second, is judged on the
 * median emit time (the e2e suite checks the fan-out's rows, not its speed). Writes
 * bench/results/fanout.json; PostgreSQL runs in a scratch database `th_bench_…` dropped afterwards
 * (without a server that half is skipped and no file is written).
 */
const os = require('node:os');
const path = require('node:path');

const { DIST, arg, log, median, pgUp, requireBuild, scratchDatabase, writeResult } = require('../lib');

requireBuild('delivery/secret.js', 'the delivery engine');
const { EVENT_TYPE, eventData, round, startApp, dsOf, seedWebhooks, one } = require('./app');
const { EventsService } = require(path.join(DIST, 'delivery/events.service'));

const WEBHOOKS = arg('webhooks', 10_000);
const SAMPLES = arg('samples', 7);
const TARGET_MS = 1000;
const HOOK_URL = 'https://hooks.example.com/hook';
const ENV = { CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdefghijklmnopqrstuvwxyz' };

const spread = (xs, d = 1) => ({ median: round(median(xs), d), min: round(Math.min(...xs), d), max: round(Math.max(...xs), d) });

/** The floor: one event's delivery rows written by a single INSERT … SELECT, in one transaction. */
function baselineWriter(ds) {
  const payload = JSON.stringify(eventData(0));
  if (ds.options.type === 'postgres') {
    return (eventId) =>
      ds.transaction(async (em) => {
        const now = Date.now();
        await em.query('INSERT INTO events (id, type, subreddit, payload, created_at) VALUES ($1, $2, $3, $4, $5)', [eventId, EVENT_TYPE, 'fanoutsub', payload, now]);
        await em.query(
          `INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, next_attempt_at, created_at, updated_at)
           SELECT 'msg_' || substr(md5($1 || s.webhook_id), 1, 26), $1, s.webhook_id, s.customer_id, 'pending', 0, $2::bigint, $2::bigint, $2::bigint
           FROM webhook_subscriptions s WHERE s.event = $3 AND s.subreddit = $4`,
          [eventId, now, EVENT_TYPE, 'fanoutsub'],
        );
      });
  }
  const db = ds.driver.databaseConnection;
  const insertEvent = db.prepare('INSERT INTO events (id, type, subreddit, payload, created_at) VALUES (?, ?, ?, ?, ?)');
  const insertDeliveries = db.prepare(
    `INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, next_attempt_at, created_at, updated_at)
     SELECT 'msg_' || lower(hex(randomblob(13))), @eventId, webhook_id, customer_id, 'pending', 0, @now, @now, @now
     FROM webhook_subscriptions WHERE event = @type AND subreddit = @subreddit`,
  );
  const write = db.transaction((eventId, now) => {
    insertEvent.run(eventId, EVENT_TYPE, 'fanoutsub', payload, now);
    return insertDeliveries.run({ eventId, now, type: EVENT_TYPE, subreddit: 'fanoutsub' }).changes;
  });
  return async (eventId) => write(eventId, Date.now());
}

async function timed(fn) {
  const t = performance.now();
  const result = await fn();
  return { ms: performance.now() - t, result };
}

async function fanout(dialect) {
  const db = await scratchDatabase(dialect);
  try {
    const app = await startApp(db.database, 'api', ENV);
    try {
      const ds = dsOf(app);
      await seedWebhooks(ds, WEBHOOKS, HOOK_URL, 'fanoutsub');
      await seedWebhooks(ds, 200, HOOK_URL, 'othersub'); // non-subscribers on the index
      const events = app.get(EventsService);
      const baseline = baselineWriter(ds);
      // One warm-up of each on another subreddit's event (prepared statements, JIT).
      await events.emit({ type: EVENT_TYPE, subreddit: 'othersub', data: eventData(0) });
      await baseline('evt_base_warmup');
      const emitMs = [];
      const baseMs = [];
      const replayMs = [];
      const ratios = [];
      for (let i = 0; i < SAMPLES; i++) {
        const id = `evt_fanout_${i}`;
        const emit = () => timed(() => events.emit({ id, type: EVENT_TYPE, subreddit: 'fanoutsub', data: eventData(i) }));
        const base = () => timed(() => baseline(`evt_base_${i}`));
        let e;
        let b;
        if (i % 2 === 0) {
          e = await emit();
          b = await base();
        } else {
          b = await base();
          e = await emit();
        }
        const again = await timed(() => events.emit({ id, type: EVENT_TYPE, subreddit: 'fanoutsub', data: eventData(i) }));
        if (e.result.deliveries !== WEBHOOKS || !e.result.created || again.result.deliveries !== 0 || again.result.created) {
          throw new Error(`${dialect}: fan-out created ${e.result.deliveries}, replay ${again.result.deliveries}`);
        }
        emitMs.push(e.ms);
        baseMs.push(b.ms);
        replayMs.push(again.ms);
        ratios.push(e.ms / b.ms);
        log(`${dialect} sample ${i + 1}: emit ${round(e.ms)} ms, baseline ${round(b.ms)} ms (${round(e.ms / b.ms, 2)}×), replay ${round(again.ms, 2)} ms`);
      }
      const n = await one(ds, "SELECT COUNT(*) AS n FROM deliveries WHERE event_id LIKE 'evt_fanout_%'");
      if (n.n !== WEBHOOKS * SAMPLES) throw new Error(`${dialect}: ${n.n} fan-out deliveries in the table`);
      return {
        ratio_to_baseline: spread(ratios, 2),
        emit_ms: spread(emitMs),
        baseline_ms: spread(baseMs),
        replay_ms: spread(replayMs, 2),
        samples: { emit_ms: emitMs.map((x) => round(x)), baseline_ms: baseMs.map((x) => round(x)) },
      };
    } finally {
      await app.close();
    }
  } finally {
    await db.drop();
  }
}

async function main() {
  const started = Date.now();
  const dialects = ['sqlite', ...((await pgUp()) ? ['postgres'] : [])];
  const results = {};
  for (const d of dialects) results[d] = await fanout(d);
  const out = {
    benchmark: 'fanout',
    generated_at: new Date().toISOString(),
    command: 'npm run build && npm run bench:fanout',
    node: process.version,
    cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}`,
    parameters: { webhooks: WEBHOOKS, samples: SAMPLES },
    target_emit_ms: TARGET_MS,
    results,
    pass: Object.values(results).every((r) => r.emit_ms.median < TARGET_MS),
    duration_s: round((Date.now() - started) / 1000),
  };

  const range = (x) => `${x.median} (${x.min}–${x.max})`;
  console.log(`\nFan-out of one event to ${WEBHOOKS} webhooks, medians (min–max) of ${SAMPLES}; target: emit < ${TARGET_MS} ms\n`);
  for (const [d, r] of Object.entries(results)) {
    console.log(`${d.padEnd(9)} emit ${range(r.emit_ms)} ms = ${range(r.ratio_to_baseline)}× the baseline ${range(r.baseline_ms)} ms; replay ${range(r.replay_ms)} ms`);
  }
  console.log(`\ntarget: ${out.pass ? 'met' : 'NOT met'} (${out.duration_s} s)`);

  if (dialects.length < 2) return console.log('no PostgreSQL: results file not written');
  writeResult('fanout.json', out);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
