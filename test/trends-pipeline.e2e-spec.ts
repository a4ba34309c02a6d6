import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { IngestService } from '../src/posts/ingest.service';
import { testDatabases } from './support/databases';
import { startTestApp, TestApp } from './support/app';
import { makeCert, Receiver, TestCert } from './support/receiver';

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 5, 0, 0, 0);

/** NDJSON in Reddit's field names: a steady subreddit for ~33 h, then a burst about one topic. */
function dataset(subreddit: string): string {
  const lines: string[] = [];
  let n = 0;
  const add = (createdMs: number, title: string) => {
    const id = `z${(n++).toString(36)}`;
    lines.push(
      JSON.stringify({
        id,
        name: `t3_${id}`,
        subreddit,
        author: `user${n % 50}`,
        title,
        selftext: '',
        url: `https://example.com/${id}`,
        permalink: `/r/${subreddit}/comments/${id}/x/`,
        score: 1,
        num_comments: 0,
        created_utc: createdMs / 1000,
      }),
    );
  };
  // The steady posts go on through the surge (bucket 400 to 411) too.
  for (let b = 0; b < 412; b++) for (let k = 0; k < 4; k++) add(T0 + b * 5 * MIN + k * 70_000, `steady talk ${n % 9} about usual things`);
  const at = T0 + 400 * 5 * MIN;
  // A surge as real ones go: four times the usual posts for an hour, the extra ones about one piece of news.
  for (let k = 0; k < 144; k++) add(at + Math.floor(k / 12) * 5 * MIN + (k % 12) * 20_000, `quantum breakthrough announced today ${k}`);
  // Later posts move the event-time watermark past the burst so its buckets close.
  for (let b = 12; b <= 24; b++) add(at + b * 5 * MIN + 30_000, `steady talk again ${b}`);
  return lines.join('\n') + '\n';
}

describe.each(testDatabases())('trend pipeline on %s', (name, makeDb) => {
  let t: TestApp;
  let cert: TestCert;
  let rx: Receiver;

  beforeAll(async () => {
    cert = makeCert();
    t = await startTestApp(makeDb(), {
      env: { SSRF_ALLOW_CIDRS: '127.0.0.1/32', DELIVERY_CA_FILE: cert.caFile, DELIVERY_POLL_INTERVAL_MS: '50' },
    });
    rx = await Receiver.start(cert);
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  it('turns ingested posts into surge and velocity events delivered to subscribers, once', async () => {
    const subreddit = `trend${Math.random().toString(36).slice(2, 9)}`;
    const c = await t.customer();
    const secrets: Record<string, string> = {};
    for (const event of ['trends.surge', 'trends.velocity']) {
      const res = await t.http().post('/v1/webhooks').set(c.auth).send({ url: rx.namedUrl(`/${event}`), event, subreddit, allow_nonstandard_port: true });
      expect(res.status).toBe(201);
      secrets[event] = res.body.data.secret;
    }
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'th-trend-')), 'posts.ndjson');
    fs.writeFileSync(file, dataset(subreddit));

    const summary = await t.app.get(IngestService).ingestFile(file);
    expect(summary.skipped).toBe(0);
    await rx.waitUntil((r) => r.some((x) => x.path === '/trends.surge') && r.some((x) => x.path === '/trends.velocity'), 15_000, 'a surge and a velocity delivery');

    const bodies = rx.received.map((r) => ({ path: r.path, body: new Webhook(secrets[r.path.slice(1)]).verify(r.body, r.headers as Record<string, string>) as any }));
    const surge = bodies.find((b) => b.path === '/trends.surge')!.body;
    expect(surge.type).toBe('trends.surge');
    expect(surge.data).toMatchObject({ subreddit, count: expect.any(Number), baseline: expect.any(Number), score: expect.any(Number) });
    // Fired on a bucket of the surge (the evidence window reaches back before it).
    expect(new Date(surge.data.window_end).getTime()).toBeGreaterThan(T0 + 400 * 5 * MIN);
    expect(new Date(surge.data.window_end).getTime()).toBeLessThanOrEqual(T0 + 412 * 5 * MIN);
    const velocity = bodies.find((b) => b.path === '/trends.velocity')!.body;
    // Any word of the surge's titles ("quantum breakthrough announced today") spikes at once; which
    // one's delivery arrives first is not fixed (concurrent sends), so any of them is right.
    expect(velocity.data.keyword).toMatch(/^(quantum|breakthrough|announc|today)/);
    expect(velocity.data.permalinks[0]).toMatch(/^https:\/\/www\.reddit\.com\/r\//);
    // Who stands behind them: the fixture's posts come from 50 accounts.
    expect(surge.data.distinct_authors).toBeGreaterThanOrEqual(10);
    // Velocity fires as soon as enough of them (5 at least) carry the story, and says when it began.
    expect(velocity.data.distinct_authors).toBeGreaterThanOrEqual(5);
    expect(Date.parse(velocity.data.first_post_at)).toBeLessThan(Date.parse(velocity.data.window_end));
    expect(velocity.data.keywords[0]).toBe(velocity.data.keyword);
    // No false alarm over the steady part.
    for (const b of bodies) expect(new Date(b.body.data.window_end).getTime()).toBeGreaterThan(T0 + 400 * 5 * MIN);

    // Replaying the same data emits nothing new.
    const ds = t.app.get<DataSource>(getDataSourceToken());
    const count = async () => Number((await ds.query(`SELECT COUNT(*) AS n FROM events WHERE subreddit = ${name === 'postgres' ? '$1' : '?'}`, [subreddit]))[0].n);
    const before = await count();
    expect(before).toBeGreaterThanOrEqual(2);
    const again = await t.app.get(IngestService).ingestFile(file);
    expect(again.inserted).toBe(0);
    expect(await count()).toBe(before);
  }, 60_000);
});
