import * as fs from 'node:fs';
import * as os from 'node:os';
import { performance } from 'node:perf_hooks';
import { startTestApp, TestApp } from '../support/app';
import { testDatabases } from '../support/databases';
import { pollUntil, ServeProcess, spawnServe, stopProcess } from '../support/processes';
import { makeCert, TestCert } from '../support/receiver';
import { EventsService } from '../../src/delivery/events.service';
import { IngestService } from '../../src/posts/ingest.service';
import type { RedditPost } from '../../src/posts/reddit-parse';
import { freePort, LoadClient, LoadStats, median, MIX, RssSample, runClosedLoop, runOpenLoop, sampleRss, SoakCustomer, SoakFixture, SoakWorkload } from '../support/soak-load';

/**
 * Soak: the API as a real `trendhooks serve --role api` process under a mixed load of the public
 * routes (webhook list pages with cursors, get, create + delete, deliveries pages, both posts
 * routes, /healthz, deliberate 404s and a free-plan key that runs into its rate limit), first
 * closed-loop to measure this run's capacity, then open-loop at 80 % of it for SOAK_SECONDS.
 * Zero 5xx, zero failed or dropped connections, every answer the status its request calls for
 * (non-2xx in the error envelope), the rate held, and the process's resident memory flat.
 *
 * SOAK_SECONDS defaults to 180 (3 minutes): with set-up and the capacity step, about 3.5 minutes
 * per database. A smoke run: SOAK_SECONDS=30 npx jest test/reliability/soak.rel-spec.ts
 */
const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? 180);
const WARMUP_SECONDS = 3;
const CAPACITY_SECONDS = 10;
/** Requests in flight while measuring capacity: enough to keep the API process's one thread busy. */
const CAPACITY_CONCURRENCY = 32;
const CONNECTIONS = 48;
const TARGET_SHARE = 0.8;
/** The other suites share this 2-core machine: the achieved rate may fall this far below the target. */
const MIN_ACHIEVED_SHARE = 0.75;
/** After this share of the soak (and the capacity step before it) memory must stay flat. */
const WARMUP_SHARE = 0.2;
const MAX_RSS_GROWTH = 0.1;

const CUSTOMERS = 8;
const WEBHOOKS_PER_CUSTOMER = 30;
const EVENTS = 12;
const POSTS = 300;
const AUTHORS = Array.from({ length: 10 }, (_, i) => `soak_author_${i}`);
const POSTS_SUBREDDIT = 'soakposts';

const mib = (kib: number) => Math.round((kib / 1024) * 10) / 10;
const round = (x: number) => Math.round(x);

function seedPosts(): RedditPost[] {
  const base = Date.UTC(2026, 0, 1);
  return Array.from({ length: POSTS }, (_, i) => {
    const id = `soak${i.toString(36)}`;
    return {
      id,
      subreddit: POSTS_SUBREDDIT,
      author: AUTHORS[i % AUTHORS.length],
      title: `Soak post number ${i} with a title of ordinary length`,
      selftext: i % 3 === 0 ? 'Some text in the body of a self post. '.repeat(5) : '',
      url: `https://example.com/soak/${i}`,
      permalink: `/r/${POSTS_SUBREDDIT}/comments/${id}/soak_post_${i}/`,
      score: (i * 37) % 1000,
      numComments: i % 50,
      createdAtMs: base + i * 60_000,
    };
  });
}

describe.each(testDatabases())('soak: mixed API load at 80%% of capacity on %s', (name, makeDb) => {
  let cert: TestCert;
  let t: TestApp;
  let child: ServeProcess | undefined;
  let client: LoadClient | undefined;
  let fixture: SoakFixture;
  let origin: string;

  beforeAll(async () => {
    cert = makeCert();
    // In-process: migrates the database and seeds it (keys, webhooks, deliveries, posts); no worker.
    t = await startTestApp(makeDb(), { role: 'api', env: { PLAN_RATE_LIMITS: 'business=100000000,free=100000000' } });
    const customers: SoakCustomer[] = [];
    for (let i = 0; i < CUSTOMERS; i++) {
      const c = await t.customer('business');
      customers.push({ auth: c.auth.Authorization, stable: [], churn: [], creating: 0, deleting: 0, listCursor: null, postsCursor: null, deliveriesCursor: null });
    }
    const free = await t.customer('free');
    await Promise.all(
      customers.map(async (c) => {
        for (let i = 0; i < WEBHOOKS_PER_CUSTOMER; i++) {
          const res = await t.http().post('/v1/webhooks').set('Authorization', c.auth).send({ url: 'https://hooks.example.com/soak', event: 'trends.surge', subreddit: 'soakhooks' });
          if (res.status !== 201) throw new Error(`seeding a webhook: ${res.status} ${res.text}`);
          c.stable.push(res.body.data.id);
        }
      }),
    );
    const events = t.app.get(EventsService);
    for (let i = 0; i < EVENTS; i++) await events.emit({ type: 'trends.surge', subreddit: 'soakhooks', data: { n: i } });
    await t.app.get(IngestService).upsertPosts(seedPosts());
    fixture = { customers, freeAuth: free.auth.Authorization, postsSubreddit: POSTS_SUBREDDIT, authors: AUTHORS, createUrl: 'https://127.0.0.1/soak' };

    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    child = spawnServe(
      t,
      cert,
      // Business keys never reach their limit; the free key's 60/min is meant to be hit (429 expected).
      { HOST: '127.0.0.1', PORT: String(port), PLAN_RATE_LIMITS: 'business=100000000,free=60', LOG_LEVEL: 'warn' },
      'api',
    );
    const status = await pollUntil(
      () => fetch(`${origin}/healthz`).then((r) => r.status, () => 0),
      (s) => s === 200 || child!.exitCode !== null,
      30_000,
    );
    if (status !== 200) throw new Error(`the API process did not come up (exit ${child.exitCode}):\n${child.output.join('')}`);
    client = new LoadClient(origin, CONNECTIONS);
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    if (child) await stopProcess(child);
    await t?.close();
    if (cert) fs.rmSync(cert.dir, { recursive: true, force: true });
  });

  it(`holds ${TARGET_SHARE * 100}% of its capacity for ${SOAK_SECONDS} s: no 5xx, no dropped connections, error envelopes, RSS growth under ${MAX_RSS_GROWTH * 100}%`, async () => {
    const proc = child!;
    const load = client!;
    const work = new SoakWorkload(fixture);
    const rss = sampleRss(proc.pid!);
    let samples: RssSample[];
    const capStats = new LoadStats();
    const soakStats = new LoadStats();
    let capacity: { mean: number; median: number };
    let target: number;
    let achieved: number;
    let soakStart: number;
    let soakEnd: number;
    try {
      // Step 1: capacity of this mix, now, on this (shared) machine; a short warm-up first (JIT, pools).
      await runClosedLoop(load, work, capStats, CAPACITY_CONCURRENCY, WARMUP_SECONDS);
      capacity = await runClosedLoop(load, work, capStats, CAPACITY_CONCURRENCY, CAPACITY_SECONDS);
      target = Math.max(10, round(capacity.median * TARGET_SHARE));
      // Step 2: open loop at 80 % of it.
      soakStart = performance.now();
      // At most 3 s of arrivals queued: a stalled server shows as skipped arrivals (a lower rate), not as client timeouts.
      achieved = await runOpenLoop(load, work, soakStats, target, SOAK_SECONDS, Math.max(100, 3 * target));
      soakEnd = performance.now();
    } finally {
      rss.stop();
      samples = rss.samples;
    }

    // Memory from the end of the warm-up (capacity step + first 20 % of the soak) to the end.
    const warmEnd = soakStart + WARMUP_SHARE * (soakEnd - soakStart);
    const after = samples.filter((s) => s.atMs >= warmEnd && s.atMs <= soakEnd).map((s) => s.kib);
    // Windows of a quarter of the samples (at least 10): V8's heap saw-tooth is wider than 10 s under this load.
    const n = Math.min(Math.max(10, Math.round(after.length / 4)), Math.floor(after.length / 2));
    const rssStart = median(after.slice(0, n));
    const rssEnd = median(after.slice(-n));
    const growth = (rssEnd - rssStart) / rssStart;
    const all = samples.map((s) => s.kib);
    const every = Math.max(1, Math.round(all.length / 20));
    const series = all.filter((_, i) => i % every === 0).map(mib).join(' ');

    console.log(
      [
        `soak ${name}: capacity ${round(capacity.median)} req/s (median of 1 s; mean ${round(capacity.mean)}), target ${target} req/s, achieved ${round(achieved)} req/s for ${SOAK_SECONDS} s, ` +
          `${soakStats.requests} requests (+${capStats.requests} in the capacity step), non-2xx ${JSON.stringify(soakStats.non2xx)}, ` +
          `p50 ${soakStats.percentile(50)} ms p99 ${soakStats.percentile(99)} ms, ` +
          `RSS ${mib(rssStart)} -> ${mib(rssEnd)} MiB (${(growth * 100).toFixed(1)} %, medians of ${n} s), load avg ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`,
        `  RSS samples: ${all.length} (1/s), after warm-up ${after.length}, min ${mib(Math.min(...all))} max ${mib(Math.max(...all))} MiB, ` +
          `lowest of the first/last ${n} after warm-up ${mib(Math.min(...after.slice(0, n)))}/${mib(Math.min(...after.slice(-n)))} MiB; every ${every} s: ${series}`,
        `  by kind: ${JSON.stringify(soakStats.byKind)}`,
        `  errors: soak ${JSON.stringify(soakStats.errors)} capacity ${JSON.stringify(capStats.errors)}; dropped connections ${load.dropped} ${load.droppedSamples.join('; ')}; connection errors ${load.connectionErrors}; skipped arrivals ${soakStats.skipped}`,
      ].join('\n'),
    );
    const context = `\n${[...capStats.unexpectedSamples, ...soakStats.unexpectedSamples, ...capStats.badEnvelopeSamples, ...soakStats.badEnvelopeSamples].join('\n')}\n--- API process output (tail) ---\n${proc.output.join('').slice(-4000)}`;

    for (const [phase, s] of [['capacity', capStats], ['soak', soakStats]] as const) {
      expect({ phase, fivexx: s.fivexx, socketErrorsOrTimeouts: s.errors, unexpectedStatuses: s.unexpected, withoutErrorEnvelope: s.badEnvelopes, context: s.fivexx + s.errorCount + s.unexpected + s.badEnvelopes ? context : '' }).toEqual({
        phase,
        fivexx: 0,
        socketErrorsOrTimeouts: {},
        unexpectedStatuses: 0,
        withoutErrorEnvelope: 0,
        context: '',
      });
    }
    expect({ dropped: load.dropped, connectionErrors: load.connectionErrors }).toEqual({ dropped: 0, connectionErrors: 0 });
    expect(proc.exitCode).toBeNull();
    // Every part of the mix ran, with the answers it calls for.
    const kinds = Object.keys(soakStats.byKind);
    for (const kind of Object.keys(MIX).flatMap((k) => (k === 'webhooks.create|delete' ? ['webhooks.create', 'webhooks.delete'] : [k]))) expect(kinds).toContain(kind);
    expect(soakStats.byKind['webhooks.get.missing'][404]).toBeGreaterThan(0);
    // The pace held: open loop, so a server that falls behind shows up here (and as skipped arrivals).
    expect(achieved).toBeGreaterThanOrEqual(target * MIN_ACHIEVED_SHARE);
    expect(achieved).toBeLessThanOrEqual(target * 1.05);
    expect(after.length).toBeGreaterThanOrEqual(10);
    expect(growth).toBeLessThan(MAX_RSS_GROWTH);
  }, (WARMUP_SECONDS + CAPACITY_SECONDS + SOAK_SECONDS + 120) * 1000);
});
