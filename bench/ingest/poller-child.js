'use strict';
/**
 * The process under measurement in bench/ingest: trendhooks' own app in role `pipeline` (its real
 * Reddit poller, posts store and trend pipeline) on a scratch SQLite file, reading the fake Reddit
 * of ingest.js through REDDIT_BASE_URL. Every time constant of the poller is divided by the
 * bench's time scale (BENCH_SCALE), so a simulated minute passes in 60/scale real seconds.
 * Answers `cpu` with its process.cpuUsage() and `stop` by closing the app.
 */
const path = require('node:path');
const { DIST } = require('../lib');

require('reflect-metadata');
const { createApp } = require(path.join(DIST, 'app'));
const { loadConfig } = require(path.join(DIST, 'config/config'));

async function main() {
  const k = Number(process.env.BENCH_SCALE);
  const config = loadConfig(process.env);
  config.trends.pollIntervalMs = Math.round(Number(process.env.BENCH_INTERVAL_MS ?? 60_000) / k);
  const s = (ms) => Math.max(1, Math.round(ms / k));
  const app = await createApp(config, {
    logger: ['error'],
    role: 'pipeline',
    poller: true,
    pollerTuning: {
      backoffBaseMs: s(1000),
      backoffMaxMs: s(60_000),
      maxRetryAfterMs: s(10 * 60_000),
      failureBackoffMaxMs: s(30 * 60_000),
      unavailableBackoffMs: s(30 * 60_000),
      rereadMaxAgeMs: s(12 * 3600_000),
      rereadMinGapMs: s(10 * 60_000),
      rateWindowMs: s(24 * 3600_000),
      rateRefreshMs: s(5 * 60_000),
      pageOverlapMs: s(60_000),
      soloCheckMaxMs: s(24 * 3600_000),
      // Reddit's 100 queries a minute per client, per real minute at this scale.
      quotaPerMinute: 100 * k,
      tickMs: s(1000),
    },
  });
  await app.init();
  process.send({ ready: true });
  process.on('message', async (m) => {
    if (m === 'cpu') process.send({ cpu: process.cpuUsage() });
    if (m === 'stop') {
      await app.close();
      process.send({ stopped: true });
      process.exit(0);
    }
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
