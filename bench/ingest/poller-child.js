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
const { scaledPollerTuning } = require(path.join(DIST, 'trends/reddit/scaled-tuning'));

async function main() {
  const k = Number(process.env.BENCH_SCALE);
  const config = loadConfig(process.env);
  config.trends.pollIntervalMs = Math.round(Number(process.env.BENCH_INTERVAL_MS ?? 60_000) / k);
  const app = await createApp(config, {
    logger: ['error'],
    role: 'pipeline',
    poller: true,
    // Reddit's 100 queries a minute per client, per real minute at this scale.
    pollerTuning: scaledPollerTuning(k, 100),
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
