'use strict';
/**
 * Routes whose cost could grow with what one customer creates, on 100,000 rows of one customer,
 * SQLite and PostgreSQL: the statement each route spends its time in, timed on two copies of one
 * seeded database, interleaved (A B A B):
 *
 *   A "main": the indexes as main (eaf0b54) had them and main's health statement (MAIN_HEALTH_SQL);
 *   B "this": this build's migrations (idx_deliveries_webhook_state_created, the partial
 *      idx_events_trend_type_subreddit_created) and its health statement (healthSql, PG_HEALTH_SQL).
 *
 * Routes: GET /v1/webhooks/{id}/deliveries?state=failed (deliveryPageQuery), GET /v1/events past
 * 100,000 test events (the SQLite per-subscription statement; the PostgreSQL LATERAL page), and
 * the 24-hour health of a page of 10 webhooks (GET /v1/webhooks; GET one is the same with 1).
 * Also the write cost of the extra deliveries index: a delivery's insert and its two state
 * updates (claim, outcome), A against B. Plans (EXPLAIN) of both are printed.
 *
 *   npm run build && node bench/api/list-bounds.js [--rows=100000] [--samples=31]
 *
 * Writes bench/results/list-bounds.json. PostgreSQL runs in scratch databases th_bench_…, dropped
 * afterwards (ANALYZEd after seeding, as autovacuum would); without a server that half is skipped.
 */
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { DIST, arg, log, median, pgUp, requireBuild, scratchDatabase, writeResult } = require('../lib');

requireBuild('delivery/queue/health-sql.js', 'the bounded health statement');
require('reflect-metadata');
const { DataSource } = require('typeorm');
const { dataSourceOptions, runMigrations, sqliteHandle } = require(path.join(DIST, 'database/data-source'));
const { TRENDHOOKS_ENTITIES } = require(path.join(DIST, 'entities'));
const { healthParams, healthSql } = require(path.join(DIST, 'delivery/queue/health-sql'));
const { deliveryPageQuery } = require(path.join(DIST, 'delivery/queue/typeorm-delivery-queue'));
const { eventsOfSubscriptionSql } = require(path.join(DIST, 'delivery/queue/sqlite/sql/recover'));
const { sqliteDeliveryPageQuery } = require(path.join(DIST, 'delivery/queue/sqlite/delivery-page'));
const { eventsPageSql } = require(path.join(DIST, 'delivery/queue/postgres/sql/events-page'));
const { PG_HEALTH_SQL } = require(path.join(DIST, 'delivery/queue/postgres/sql/health'));

const ROWS = arg('rows', 100_000);
const SAMPLES = arg('samples', 31);
const WRITES = arg('writes', 2_000);
const NOW = Date.now();
const DAY = 24 * 3600 * 1000;
const W = '01JBENCHW0000000000000000'; // the big webhook
const PAGE = Array.from({ length: 10 }, (_, i) => (i === 0 ? W : `01JBENCHW00000000000000${String(i).padStart(2, '0')}`).slice(0, 26));
const OTHER = '01JBENCHOTHER0000000000000';

/** main's health statement (src/delivery/queue/typeorm-delivery-queue.ts at eaf0b54): every delivery of the 24 h. */
const MAIN_HEALTH_SQL = `WITH x AS MATERIALIZED (
    SELECT d.webhook_id AS webhook_id, a.outcome AS outcome, a.started_at AS started_at
      FROM deliveries d JOIN delivery_attempts a ON a.delivery_id = d.id
     WHERE d.webhook_id IN (:...ids) AND d.created_at >= :since),
  ok AS (SELECT webhook_id, MAX(started_at) AS last_ok FROM x WHERE outcome = 'delivered' GROUP BY webhook_id)
SELECT x.webhook_id AS webhook_id, COUNT(*) AS attempts,
       SUM(CASE WHEN x.outcome = 'delivered' THEN 1 ELSE 0 END) AS delivered,
       SUM(CASE WHEN x.outcome <> 'delivered' AND (ok.last_ok IS NULL OR x.started_at > ok.last_ok) THEN 1 ELSE 0 END) AS failing
  FROM x LEFT JOIN ok ON ok.webhook_id = x.webhook_id
 GROUP BY x.webhook_id`;

const pad = (i, n = 8) => String(i).padStart(n, '0');
const round = (x) => Math.round(x * 1000) / 1000;

/**
 * One customer's 100,000 deliveries of one webhook in the last 24 h (the oldest 1 in 100 failed, the
 * rest delivered, one attempt each), 10 each on nine more webhooks; another customer's ROWS/5 failed
 * deliveries; ROWS test events of the big webhook's subscription, newer than its 50 trend events.
 */
function seedRows(i) {
  const created = NOW - DAY + 60_000 + Math.floor((i * (DAY - 120_000)) / ROWS);
  return { id: `msg_b${pad(i)}`, created, state: i < ROWS / 100 ? 'failed' : 'delivered' };
}

async function seedSqlite(ds) {
  const db = sqliteHandle(ds);
  const del = db.prepare(`INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?)`);
  const att = db.prepare(`INSERT INTO delivery_attempts (id, delivery_id, attempt_no, started_at, duration_ms, status_code, outcome) VALUES (?, ?, 1, ?, 20, ?, ?)`);
  const ev = db.prepare(`INSERT INTO events (id, type, subreddit, payload, created_at) VALUES (?, 'trends.surge', 'benchsub', '{}', ?)`);
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) {
      const r = seedRows(i);
      del.run(r.id, `evt_b${pad(i)}`, W, 'cus_big', r.state, r.created, r.created);
      att.run(`att_b${pad(i)}`, r.id, r.created + 5, r.state === 'failed' ? 500 : 200, r.state === 'failed' ? 'failed' : 'delivered');
    }
    for (let w = 1; w < PAGE.length; w++) {
      for (let i = 0; i < 10; i++) {
        const id = `msg_p${w}_${i}`;
        del.run(id, `evt_p${w}_${i}`, PAGE[w], 'cus_big', 'delivered', NOW - 3600_000 + i, NOW);
        att.run(`att_p${w}_${i}`, id, NOW - 3600_000 + i + 5, 200, 'delivered');
      }
    }
    for (let i = 0; i < ROWS / 5; i++) del.run(`msg_o${pad(i)}`, `evt_o${pad(i)}`, OTHER, 'cus_other', 'failed', NOW - DAY + i, NOW);
    for (let i = 0; i < 50; i++) ev.run(`evt_trend${pad(i)}`, NOW - 2 * DAY + i * 1000);
    for (let i = 0; i < ROWS; i++) ev.run(`evt_test_${pad(i, 17)}`, NOW - DAY + i * 100);
  })();
  db.exec('ANALYZE');
}

async function seedPostgres(ds) {
  const day0 = NOW - DAY + 60_000;
  const step = (DAY - 120_000) / ROWS;
  await ds.query(`INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, created_at, updated_at)
    SELECT 'msg_b' || lpad(i::text, 8, '0'), 'evt_b' || lpad(i::text, 8, '0'), $1, 'cus_big', CASE WHEN i < $4::int / 100 THEN 'failed' ELSE 'delivered' END, 1,
           $2::bigint + floor(i * $3::float8)::bigint, $2::bigint + floor(i * $3::float8)::bigint
      FROM generate_series(0, $4::int - 1) i`, [W, day0, step, ROWS]);
  await ds.query(`INSERT INTO delivery_attempts (id, delivery_id, attempt_no, started_at, duration_ms, status_code, outcome)
    SELECT 'att_b' || substr(id, 6), id, 1, created_at + 5, 20, CASE WHEN state = 'failed' THEN 500 ELSE 200 END, CASE WHEN state = 'failed' THEN 'failed' ELSE 'delivered' END
      FROM deliveries WHERE webhook_id = $1`, [W]);
  for (let w = 1; w < PAGE.length; w++) {
    await ds.query(`INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, created_at, updated_at)
      SELECT 'msg_p${w}_' || i, 'evt_p${w}_' || i, $1, 'cus_big', 'delivered', 1, $2::bigint + i, $2::bigint FROM generate_series(0, 9) i`, [PAGE[w], NOW - 3600_000]);
    await ds.query(`INSERT INTO delivery_attempts (id, delivery_id, attempt_no, started_at, duration_ms, status_code, outcome)
      SELECT 'att_p${w}_' || i, 'msg_p${w}_' || i, 1, $1::bigint + i + 5, 20, 200, 'delivered' FROM generate_series(0, 9) i`, [NOW - 3600_000]);
  }
  await ds.query(`INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, created_at, updated_at)
    SELECT 'msg_o' || lpad(i::text, 8, '0'), 'evt_o' || lpad(i::text, 8, '0'), $1, 'cus_other', 'failed', 1, $2::bigint + i, $2::bigint FROM generate_series(0, $3::int - 1) i`, [OTHER, NOW - DAY, ROWS / 5]);
  await ds.query(`INSERT INTO events (id, type, subreddit, payload, created_at) SELECT 'evt_trend' || lpad(i::text, 8, '0'), 'trends.surge', 'benchsub', '{}', $1::bigint + i * 1000 FROM generate_series(0, 49) i`, [NOW - 2 * DAY]);
  await ds.query(`INSERT INTO events (id, type, subreddit, payload, created_at) SELECT 'evt_test_' || lpad(i::text, 17, '0'), 'trends.surge', 'benchsub', '{}', $1::bigint + i * 100 FROM generate_series(0, $2::int - 1) i`, [NOW - DAY, ROWS]);
  await ds.query('ANALYZE');
}

async function open(database) {
  const ds = new DataSource(dataSourceOptions(database, TRENDHOOKS_ENTITIES));
  await ds.initialize();
  return ds;
}

/** The statements of each route on `ds`; `main` picks main's health statement. */
function routes(ds, main) {
  const pg = ds.options.type === 'postgres';
  const esc = (sql, params) => ds.driver.escapeQueryWithParameters(sql, params, {});
  const since = new Date(NOW - DAY);
  // main ran deliveryPageQuery on both databases; this build names the state index on SQLite.
  const page = (filter) => (pg || main ? deliveryPageQuery(ds, W, { limit: 25 }, filter).getQueryAndParameters() : sqliteDeliveryPageQuery(ds, W, { limit: 25 }, filter));
  const deliveries = page({ state: 'failed' });
  const deliveriesTimed = page({ state: 'failed', since: new Date(0), until: new Date(NOW + DAY) });
  const health = main ? esc(MAIN_HEALTH_SQL, { ids: PAGE, since: since.getTime() }) : pg ? [PG_HEALTH_SQL, [PAGE, since.getTime()]] : esc(healthSql(PAGE.length), healthParams(PAGE, since));
  const healthOne = main ? esc(MAIN_HEALTH_SQL, { ids: [W], since: since.getTime() }) : pg ? [PG_HEALTH_SQL, [[W], since.getTime()]] : esc(healthSql(1), healthParams([W], since));
  // main's SQLite statement named no index (this build's names the partial one, which A lacks).
  const events = pg ? [eventsPageSql('', 'DESC', '$4::int'), [['trends.surge'], ['benchsub'], [0], 26]] : [main ? eventsOfSubscriptionSql(null, 'DESC').replace(' INDEXED BY idx_events_trend_type_subreddit_created', '') : eventsOfSubscriptionSql(null, 'DESC'), ['trends.surge', 'benchsub', 0, 26]];
  return { 'deliveries?state=failed': deliveries, 'deliveries?state=failed&since&until': deliveriesTimed, 'events (past test events)': events, 'health, page of 10': health, 'health, one webhook': healthOne };
}

async function run(ds, [sql, params]) {
  if (ds.options.type === 'postgres') return ds.query(sql, params);
  return sqliteHandle(ds).prepare(sql).all(...params);
}

async function plan(ds, [sql, params]) {
  if (ds.options.type === 'postgres') return (await ds.query(`EXPLAIN ${sql}`, params)).map((r) => r['QUERY PLAN']).join('\n');
  return sqliteHandle(ds).prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params).map((r) => r.detail).join('\n');
}

/** A delivery's writes: insert (fan-out), claim (pending → delivering), outcome (→ delivered). Median µs per delivery. */
async function writeCost(ds, tag, from, n) {
  const pg = ds.options.type === 'postgres';
  const ins = `INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, next_attempt_at, created_at, updated_at) VALUES (${pg ? '$1, $2, $3, $4, $5, 0, $6, $6, $6' : '?, ?, ?, ?, ?, 0, ?, ?, ?'})`;
  const claim = `UPDATE deliveries SET state = 'delivering', attempts = attempts + 1, lease_owner = 'w', next_attempt_at = ${pg ? '$1' : '?'} WHERE id = ${pg ? '$2' : '?'}`;
  const done = `UPDATE deliveries SET state = 'delivered', lease_owner = NULL, next_attempt_at = NULL, delivered_at = ${pg ? '$1' : '?'} WHERE id = ${pg ? '$2' : '?'}`;
  const times = [];
  const db = pg ? null : sqliteHandle(ds);
  for (let i = from; i < from + n; i++) {
    const id = `msg_w${tag}${pad(i)}`;
    const t = NOW + i;
    const start = performance.now();
    if (pg) {
      await ds.query(ins, [id, `evt_w${pad(i)}`, W, 'cus_big', 'pending', t]);
      await ds.query(claim, [t + 30_000, id]);
      await ds.query(done, [t, id]);
    } else {
      db.prepare(ins).run(id, `evt_w${pad(i)}`, W, 'cus_big', 'pending', t, t, t);
      db.prepare(claim).run(t + 30_000, id);
      db.prepare(done).run(t, id);
    }
    times.push((performance.now() - start) * 1000);
  }
  return times;
}

async function dialect(name) {
  log(`${name}: seeding ${ROWS} rows`);
  const seed = await scratchDatabase(name);
  const made = [seed];
  let ds = await open(seed.database);
  await runMigrations(ds);
  await (name === 'sqlite' ? seedSqlite(ds) : seedPostgres(ds));
  await ds.destroy();
  const copy = await scratchDatabase(name, seed);
  made.push(copy);
  const a = await open(copy.database);
  const b = await open(seed.database);
  // A: main's index set (this build's two list indexes dropped).
  await a.query('DROP INDEX idx_deliveries_webhook_state_created');
  await a.query('DROP INDEX idx_events_trend_type_subreddit_created');
  await a.query('ANALYZE');
  const out = { routes: {}, writes: {} };
  const ra = routes(a, true);
  const rb = routes(b, false);
  for (const route of Object.keys(ra)) {
    const rowsA = await run(a, ra[route]);
    const rowsB = await run(b, rb[route]);
    const ta = [];
    const tb = [];
    for (let s = 0; s < SAMPLES; s++) {
      for (const [ds1, q, into] of [
        [a, ra[route], ta],
        [b, rb[route], tb],
      ]) {
        const t0 = performance.now();
        await run(ds1, q);
        into.push(performance.now() - t0);
      }
    }
    const sum = (xs) => ({ median_ms: round(median(xs)), min_ms: round(Math.min(...xs)), max_ms: round(Math.max(...xs)) });
    out.routes[route] = { main: sum(ta), this: sum(tb), rows: { main: rowsA.length, this: rowsB.length }, plan: { main: await plan(a, ra[route]), this: await plan(b, rb[route]) } };
    log(`${name} ${route}: main ${out.routes[route].main.median_ms} ms (${out.routes[route].main.min_ms}–${out.routes[route].main.max_ms}), this ${out.routes[route].this.median_ms} ms (${out.routes[route].this.min_ms}–${out.routes[route].this.max_ms}); rows ${rowsA.length}/${rowsB.length}`);
  }
  // Writes: blocks of 100 deliveries, A B A B.
  const wa = [];
  const wb = [];
  for (let blk = 0; blk < WRITES / 100; blk++) {
    wa.push(...(await writeCost(a, 'a', blk * 100, 100)));
    wb.push(...(await writeCost(b, 'b', blk * 100, 100)));
  }
  const us = (xs) => ({ median_us: Math.round(median(xs)), min_us: Math.round(Math.min(...xs)), max_us: Math.round(Math.max(...xs)) });
  out.writes = { main: us(wa), this: us(wb), deliveries: WRITES };
  log(`${name} insert + claim + outcome per delivery: main ${out.writes.main.median_us} µs, this ${out.writes.this.median_us} µs (medians of ${WRITES})`);
  await a.destroy();
  await b.destroy();
  for (const m of made) await m.drop();
  return out;
}

(async () => {
  const result = { rows: ROWS, samples: SAMPLES, sqlite: await dialect('sqlite') };
  if (await pgUp()) result.postgres = await dialect('postgres');
  for (const d of ['sqlite', 'postgres']) {
    if (!result[d]) continue;
    for (const [route, r] of Object.entries(result[d].routes)) {
      console.log(`\n== ${d} ${route}: main ${r.main.median_ms} ms, this ${r.this.median_ms} ms\n-- main plan\n${r.plan.main}\n-- this plan\n${r.plan.this}`);
    }
  }
  result.pass = true;
  writeResult('list-bounds.json', result);
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
