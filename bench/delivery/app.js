'use strict';
/**
 * What the delivery benches (throughput.js, fanout.js) share: a trendhooks app on a scratch
 * database, webhooks inserted in bulk, one row of a query as numbers, and the event they emit.
 * Requires dist/: each bench checks it with requireBuild before loading this file.
 */
const path = require('node:path');
const { DIST } = require('../lib');

require('reflect-metadata');
const { getDataSourceToken } = require('@nestjs/typeorm');
const { createApp } = require(path.join(DIST, 'app'));
const { loadConfig } = require(path.join(DIST, 'config/config'));
const { newUlid } = require(path.join(DIST, 'common/ids'));
const { generateWebhookSecret } = require(path.join(DIST, 'delivery/secret'));

const EVENT_TYPE = 'trends.surge';
const eventData = (i) => ({ count: 420 + i, baseline: 17.25, ratio: 24.35, window_s: 3600, top_post: 't3_1abcde' });
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

/** An initialised app of `role` on `database` (a DatabaseConfig), configured by the environment `env`. */
async function startApp(database, role, env) {
  const config = loadConfig(env);
  config.database = database;
  // poller: false — role all would also poll Reddit for the subscribed subreddits beside the measurement.
  const app = await createApp(config, { logger: ['error', 'warn'], role, poller: false });
  await app.init();
  return app;
}

const dsOf = (app) => app.get(getDataSourceToken());

/** `n` webhooks on one subreddit (endpoint and subscription rows), inserted in bulk (setup speed, not what is measured). */
async function seedWebhooks(ds, n, url, subreddit) {
  const now = Date.now();
  const rows = Array.from({ length: n }, (_, i) => [newUlid(now), `cus_bench${i % 50}`, url, EVENT_TYPE, subreddit, generateWebhookSecret(), now]);
  if (ds.options.type === 'postgres') {
    const col = (k) => rows.map((r) => r[k]);
    await ds.query(
      `INSERT INTO webhooks (id, customer_id, url, allow_nonstandard_port, secret, created_at)
       SELECT id, customer_id, url, true, secret, $5::bigint
       FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::varchar[]) AS t(id, customer_id, url, secret)`,
      [col(0), col(1), col(2), col(5), now],
    );
    await ds.query(
      `INSERT INTO webhook_subscriptions (webhook_id, customer_id, event, subreddit, created_at)
       SELECT id, customer_id, event, subreddit, $5::bigint
       FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::varchar[]) AS t(id, customer_id, event, subreddit)`,
      [col(0), col(1), col(3), col(4), now],
    );
    await ds.query('ANALYZE webhooks');
    await ds.query('ANALYZE webhook_subscriptions');
  } else {
    const db = ds.driver.databaseConnection;
    const endpoint = db.prepare('INSERT INTO webhooks (id, customer_id, url, allow_nonstandard_port, secret, created_at) VALUES (?, ?, ?, 1, ?, ?)');
    const subscription = db.prepare('INSERT INTO webhook_subscriptions (webhook_id, customer_id, event, subreddit, created_at) VALUES (?, ?, ?, ?, ?)');
    db.transaction(() =>
      rows.forEach(([id, customer, url, event, subreddit, secret, at]) => {
        endpoint.run(id, customer, url, secret, at);
        subscription.run(id, customer, event, subreddit, at);
      }),
    )();
  }
  return rows.map((r) => r[0]);
}

async function one(ds, sql) {
  const rows = await ds.query(sql);
  return Object.fromEntries(Object.entries(rows[0]).map(([k, v]) => [k, v === null ? null : Number(v)]));
}

module.exports = { EVENT_TYPE, eventData, round, startApp, dsOf, seedWebhooks, one };
