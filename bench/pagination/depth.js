'use strict';
/**
 * Keyset pagination at depth: page latency of GET /v1/subreddits/{sub}/posts?limit=100 on the first
 * page and on a page ~1,000,000 rows deep, through real HTTP, on SQLite and PostgreSQL.
 *
 *   npm run build && npm run bench:pagination          # or: node bench/pagination/depth.js [--rows=1000000] [--samples=200]
 *
 * The deep cursor is minted with the app's own CursorCodec and the same CURSOR_SECRET, i.e. exactly
 * the token the API would have issued on that page (walking 10,000 pages to get it is pointless).
 * First and deep requests alternate, so drift (GC, autovacuum, page cache) hits both alike.
 * Prints a table and writes bench/results/pagination-depth.json. PostgreSQL runs in a scratch
 * database `th_bench_…` that is dropped afterwards; without a server that half is skipped.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { DIST, PG_ADMIN_URL, arg, log, requireBuild, scratchDatabase } = require('../lib');

requireBuild('posts/post.store.js', 'the posts module');
require('reflect-metadata');
const { getDataSourceToken } = require('@nestjs/typeorm');
const { Agent, request } = require('undici');
const { createApp } = require(path.join(DIST, 'app'));
const { loadConfig } = require(path.join(DIST, 'config/config'));
const { ApiKeyService } = require(path.join(DIST, 'auth/api-key.service'));
const { CursorCodec, CursorKeyRing } = require(path.join(DIST, 'pagination/cursor-codec'));
const { PostStore } = require(path.join(DIST, 'posts/post.store'));
const { POSTS_SUBREDDIT_ROUTE } = require(path.join(DIST, 'posts/posts.service'));

const ROWS = arg('rows', 1_000_000);
const SAMPLES = arg('samples', 200);
const WARMUP = arg('warmup', 50);
const LIMIT = 100;
const SUB = 'benchdepth';
const T0 = Date.UTC(2020, 0, 1);
const SECRET = 'bench-cursor-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const TARGET_RATIO = 1.3;

// Row i (0 = oldest): created_at repeats in pairs so the id tie-breaker is on the path.
const idOf = (i) => `b${String(i).padStart(7, '0')}`;
const createdOf = (i) => T0 + Math.floor(i / 2) * 1000;


function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { median_ms: round(q(0.5)), p90_ms: round(q(0.9)), min_ms: round(s[0]), mean_ms: round(s.reduce((x, y) => x + y, 0) / s.length) };
}
const round = (x) => Math.round(x * 1000) / 1000;

function seedSqlite(ds) {
  // The TypeORM better-sqlite3 driver's own connection: one transaction, one prepared statement.
  const db = ds.driver.databaseConnection;
  const insert = db.prepare(
    'INSERT INTO posts (id, subreddit, author, author_key, title, selftext, url, permalink, score, num_comments, created_at, first_seen_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) {
      const id = idOf(i);
      const author = `user${i % 10000}`;
      insert.run(id, SUB, author, author, `Post number ${i}`, '', `https://example.com/${id}`, `/r/${SUB}/comments/${id}/p/`, i % 1000, i % 50, createdOf(i), T0, T0);
    }
  })();
  db.exec('ANALYZE');
}

async function seedPostgres(ds) {
  await ds.query(
    `INSERT INTO posts (id, subreddit, author, author_key, title, selftext, url, permalink, score, num_comments, created_at, first_seen_at, updated_at)
     SELECT 'b' || lpad(g::text, 7, '0'), $1::text, 'user' || (g % 10000), 'user' || (g % 10000), 'Post number ' || g, '',
            'https://example.com/b' || lpad(g::text, 7, '0'), '/r/' || $1::text || '/comments/b' || lpad(g::text, 7, '0') || '/p/',
            g % 1000, g % 50, $2::bigint + (g / 2) * 1000, $2::bigint, $2::bigint
     FROM generate_series(0, $3::int - 1) g`,
    [SUB, T0, ROWS],
  );
  await ds.query('ANALYZE posts');
}

async function explain(ds, dialect, repo, req) {
  const [sql, params] = repo.pageQuery('subreddit', SUB, req).getQueryAndParameters();
  if (dialect === 'sqlite') return (await ds.query(`EXPLAIN QUERY PLAN ${sql}`, params)).map((r) => r.detail);
  return (await ds.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`, params)).map((r) => r['QUERY PLAN']);
}

async function runOne(dialect, database) {
  const config = loadConfig({ CURSOR_SECRET: SECRET, PLAN_RATE_LIMITS: 'business=100000000' });
  config.database = database;
  // role api: no delivery worker polling the database during the measurement.
  const app = await createApp(config, { logger: ['error', 'warn'], role: 'api' });
  try {
    await app.listen(0, '127.0.0.1');
    const ds = app.get(getDataSourceToken());
    const repo = app.get(PostStore);

    log(`${dialect}: seeding ${ROWS.toLocaleString()} posts into r/${SUB}`);
    let t = Date.now();
    if (dialect === 'sqlite') seedSqlite(ds);
    else await seedPostgres(ds);
    const seedMs = Date.now() - t;
    log(`${dialect}: seeded in ${(seedMs / 1000).toFixed(1)} s`);

    const issued = await app.get(ApiKeyService).issue(`bench-${process.pid}`, 'business');
    const codec = new CursorCodec(CursorKeyRing.fromSecrets([SECRET]), { ttlSeconds: 86_400 });
    // Anchor 150 rows above the oldest: the deep page is the 100 rows below it, with more still after.
    const anchor = 150;
    const position = [createdOf(anchor), idOf(anchor)];
    const deepCursor = codec.encode({ route: POSTS_SUBREDDIT_ROUTE, customerId: issued.customer_id, params: { subreddit: SUB }, position, direction: 'next' }, new Date());

    const port = app.getHttpServer().address().port;
    const dispatcher = new Agent({ connections: 1, keepAliveTimeout: 60_000 });
    const base = `http://127.0.0.1:${port}/v1/subreddits/${SUB}/posts?limit=${LIMIT}`;
    const urls = { first: base, deep: `${base}&cursor=${encodeURIComponent(deepCursor)}` };
    const headers = { authorization: `Bearer ${issued.key}` };
    const get = async (url) => {
      const started = process.hrtime.bigint();
      const res = await request(url, { dispatcher, headers });
      const body = await res.body.json();
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${JSON.stringify(body)}`);
      return { ms, body };
    };

    // Correctness before speed: both pages are full and are the pages they claim to be.
    const first = (await get(urls.first)).body;
    const deep = (await get(urls.deep)).body;
    const expectIds = (body, from) => body.data.length === LIMIT && body.data.every((p, k) => p.id === idOf(from - k));
    if (!expectIds(first, ROWS - 1) || !expectIds(deep, anchor - 1) || !deep.meta.page.next_cursor) {
      throw new Error(`${dialect}: unexpected page contents (first ${first.data[0]?.id}, deep ${deep.data[0]?.id})`);
    }

    const http = { first: [], deep: [] };
    for (let i = 0; i < WARMUP; i++) for (const k of ['first', 'deep']) await get(urls[k]);
    for (let i = 0; i < SAMPLES; i++) for (const k of ['first', 'deep']) http[k].push((await get(urls[k])).ms);

    // The same two queries without HTTP and JSON: the database's share of the figure.
    const reqs = { first: { limit: LIMIT }, deep: { limit: LIMIT, after: position } };
    const query = { first: [], deep: [] };
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      for (const k of ['first', 'deep']) {
        const started = process.hrtime.bigint();
        await repo.pageBySubreddit(SUB, reqs[k]);
        if (i >= WARMUP) query[k].push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }
    await dispatcher.close();

    const h = { first: stats(http.first), deep: stats(http.deep) };
    const q = { first: stats(query.first), deep: stats(query.deep) };
    return {
      rows: ROWS,
      seed_ms: seedMs,
      http: { ...h, ratio_deep_to_first: round(h.deep.median_ms / h.first.median_ms) },
      query: { ...q, ratio_deep_to_first: round(q.deep.median_ms / q.first.median_ms) },
      plan_deep: await explain(ds, dialect, repo, reqs.deep),
    };
  } finally {
    await app.close();
  }
}

async function main() {
  const results = {};

  for (const dialect of ['sqlite', 'postgres']) {
    let db;
    try {
      db = await scratchDatabase(dialect);
    } catch (err) {
      log(`PostgreSQL at ${PG_ADMIN_URL} unavailable (${err.message}): skipped`);
      results[dialect] = { skipped: err.message };
      continue;
    }
    try {
      results[dialect] = await runOne(dialect, db.database);
    } finally {
      await db.drop();
    }
  }

  const out = {
    benchmark: 'pagination-depth',
    generated_at: new Date().toISOString(),
    node: process.version,
    cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}`,
    route: `GET /v1/subreddits/${SUB}/posts?limit=${LIMIT}`,
    depth: { first: 0, deep: ROWS - 150 },
    warmup: WARMUP,
    samples: SAMPLES,
    target_ratio: TARGET_RATIO,
    results,
  };

  console.log(`\nGET /v1/subreddits/${SUB}/posts?limit=${LIMIT} over ${ROWS.toLocaleString()} posts; medians of ${SAMPLES} (after ${WARMUP} warm-up)\n`);
  console.log('database    first page  deep page   deep/first   (query only: first  deep  ratio)');
  for (const [name, r] of Object.entries(results)) {
    if (r.skipped) {
      console.log(`${name.padEnd(11)} skipped: ${r.skipped}`);
      continue;
    }
    const ms = (x) => `${x.toFixed(2)} ms`.padStart(10);
    console.log(
      `${name.padEnd(11)} ${ms(r.http.first.median_ms)}  ${ms(r.http.deep.median_ms)}  ${String(r.http.ratio_deep_to_first).padStart(8)}     ${ms(r.query.first.median_ms)} ${ms(r.query.deep.median_ms)}  ${r.query.ratio_deep_to_first}`,
    );
  }
  const ratios = Object.values(results).filter((r) => !r.skipped).map((r) => r.http.ratio_deep_to_first);
  out.pass = ratios.length > 0 && ratios.every((x) => x <= TARGET_RATIO);
  console.log(`\ntarget deep/first ≤ ${TARGET_RATIO}: ${out.pass ? 'met' : 'NOT met'}`);

  const resultsDir = path.resolve(__dirname, '../results');
  fs.mkdirSync(resultsDir, { recursive: true });
  fs.writeFileSync(path.join(resultsDir, 'pagination-depth.json'), JSON.stringify(out, null, 2) + '\n');
  console.log(`wrote ${path.relative(process.cwd(), path.join(resultsDir, 'pagination-depth.json'))}`);
  if (!out.pass) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
