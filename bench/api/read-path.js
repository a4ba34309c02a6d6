'use strict';
/**
 * CPU per call of the list routes' own work, without HTTP, Nest's request pipeline or logging:
 * `ApiKeyService.authenticate` + `WebhooksService.list` (and the two posts lists) on `limit=25`,
 * in-process, timed with process.cpuUsage (user + system). With `--baseline=<dir>` a second build
 * (e.g. an older dist/ copied aside) runs in alternating rounds in its own child process, so the
 * two are compared on the same machine at the same time: the cut the code made, independent of the
 * CPU share a loaded machine gives the process.
 *
 *   npm run build && node bench/api/read-path.js [--calls=2000] [--rounds=5] [--baseline=/path/to/old/dist]
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { DIST, arg, median } = require('../lib');

const CALLS = arg('calls', 2000);
const ROUNDS = arg('rounds', 5);
const baseline = process.argv.find((a) => a.startsWith('--baseline='))?.slice(11);

/** Child mode: boots the app context of `dist`, seeds, prints one JSON line of µs per call per route. */
async function child(dist) {
  require('reflect-metadata');
  const { NestFactory } = require(path.join(dist, '..', 'node_modules', '@nestjs', 'core'));
  const { loadConfig } = require(path.join(dist, 'config/config.js'));
  const { AppModule } = require(path.join(dist, 'app.module.js'));
  const { migrateDatabase } = require(path.join(dist, 'app.js'));
  const { ApiKeyService } = require(path.join(dist, 'auth/api-key.service.js'));
  const { WebhooksService } = require(path.join(dist, 'webhooks/webhooks.service.js'));
  const { PostsService } = require(path.join(dist, 'posts/posts.service.js'));
  const { IngestService } = require(path.join(dist, 'posts/ingest.service.js'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-read-path-'));
  try {
    const config = loadConfig({
      DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}`,
      CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdefghijklmnop',
      SSRF_ALLOW_CIDRS: '127.0.0.1/32',
      LOG_LEVEL: 'silent',
    });
    await migrateDatabase(config);
    const ctx = await NestFactory.createApplicationContext(AppModule.forRoot(config, { role: 'api', logs: false }), { logger: false });
    const keys = ctx.get(ApiKeyService);
    const issued = await keys.issue('bench', 'business');
    const header = `Bearer ${issued.key}`;
    // The services take the principal ApiKeyPrincipalResolver makes of a key (the key's customer as tenant).
    const principal = async () => {
      const p = await keys.authenticate(header);
      return { tenantId: p.customerId, plan: p.plan, rateLimitKey: `key:${p.keyId}`, keyId: p.keyId };
    };
    const caller = await principal();
    const webhooks = ctx.get(WebhooksService);
    for (let i = 0; i < 30; i++) await webhooks.create(caller, { url: 'https://127.0.0.1/bench', event: 'trends.surge', subreddit: `bench${i}x` });
    const lines = Array.from({ length: 40 }, (_, i) =>
      JSON.stringify({ kind: 't3', data: { id: `bench${i.toString(36)}`, subreddit: 'benchsub', author: 'bench_author', title: `Benchmark post ${i}`, selftext: 'Some words. '.repeat(20), score: i, num_comments: i, created_utc: 1_700_000_000 + i * 60, permalink: `/r/benchsub/comments/bench${i.toString(36)}/x/` } }),
    );
    fs.writeFileSync(path.join(dir, 'posts.ndjson'), lines.join('\n') + '\n');
    await ctx.get(IngestService).ingestFile(path.join(dir, 'posts.ndjson'));
    const posts = ctx.get(PostsService);
    const query = { limit: '25' };
    const routes = {
      webhooks_list: async () => webhooks.list(await principal(), query),
      subreddit_posts: async () => posts.listBySubreddit(await principal(), 'benchsub', query),
      user_posts: async () => posts.listByUser(await principal(), 'bench_author', query),
    };
    const out = {};
    for (const [name, fn] of Object.entries(routes)) {
      for (let i = 0; i < 200; i++) await fn(); // warm-up
      const start = process.cpuUsage();
      for (let i = 0; i < CALLS; i++) {
        const page = await fn();
        if (page.items.length !== 25) throw new Error(`${name}: ${page.items.length} items`);
      }
      const used = process.cpuUsage(start);
      out[name] = (used.user + used.system) / CALLS;
    }
    await ctx.close();
    console.log(JSON.stringify(out));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function runChild(dist) {
  const res = spawnSync(process.execPath, [__filename, `--child=${dist}`, `--calls=${CALLS}`], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`${dist}: ${res.stderr}`);
  return JSON.parse(res.stdout.trim().split('\n').pop());
}

function main() {
  const builds = { current: DIST, ...(baseline ? { baseline: path.resolve(baseline) } : {}) };
  const samples = Object.fromEntries(Object.keys(builds).map((b) => [b, []]));
  for (let r = 0; r < ROUNDS; r++) for (const [b, dist] of Object.entries(builds)) samples[b].push(runChild(dist));
  const table = [];
  for (const route of Object.keys(samples.current[0])) {
    const row = { route };
    for (const b of Object.keys(builds)) {
      const xs = samples[b].map((s) => s[route]);
      row[`${b}_us`] = Math.round(median(xs));
      row[`${b}_min–max`] = `${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))}`;
    }
    if (baseline) row.current_to_baseline = Math.round((median(samples.current.map((s) => s[route])) / median(samples.baseline.map((s) => s[route]))) * 1000) / 1000;
    table.push(row);
  }
  console.table(table);
  console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
}

const childArg = process.argv.find((a) => a.startsWith('--child='));
if (childArg) {
  child(childArg.slice(8)).then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
} else {
  main();
}
