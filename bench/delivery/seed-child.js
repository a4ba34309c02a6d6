'use strict';
/**
 * Seeds a benchmark's template database with the build it will be measured with (throughput.js
 * forks it with BENCH_DIST set to a compared build): that build's migrations make the schema, so
 * an A/B of a schema change (an index dropped, say) compares the two schemas, not only the code.
 *
 *   argv: JSON {database, env, n, url, subreddit}; exits 0 once seeded.
 */
const { startApp, dsOf, seedWebhooks } = require('./app');

const { database, env, n, url, subreddit } = JSON.parse(process.argv[2]);

(async () => {
  const app = await startApp(database, 'api', env);
  try {
    await seedWebhooks(dsOf(app), n, url, subreddit);
  } finally {
    await app.close();
  }
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
