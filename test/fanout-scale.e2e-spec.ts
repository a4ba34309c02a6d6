import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import { newUlid } from '../src/common/ids';
import { EventsService } from '../src/delivery/events.service';
import { generateWebhookSecret } from '../src/delivery/secret';
import { testDatabases } from './support/databases';
import { startTestApp, TestApp } from './support/app';

// Its speed is bench/delivery/fanout.js's to measure, against a same-run baseline: a wall-clock bound
// here would measure the load of the machine running the suites as much as the fan-out.
const SUBSCRIBERS = 10_000;

/** `n` webhooks on one subreddit (endpoint and subscription rows), written in bulk: the setup is not what is tested. */
async function insertWebhooks(ds: DataSource, n: number, subreddit: string): Promise<void> {
  const now = Date.now();
  const rows = Array.from({ length: n }, (_, i) => ({ id: newUlid(now), customer: `cus_fanout${i % 100}`, secret: generateWebhookSecret() }));
  const url = 'https://hooks.example.com/hook';
  if (ds.options.type === 'postgres') {
    await ds.query(
      `INSERT INTO webhooks (id, customer_id, url, allow_nonstandard_port, secret, created_at)
       SELECT t.id, t.customer_id, $3, false, t.secret, $4::bigint
       FROM unnest($1::varchar[], $2::varchar[], $5::varchar[]) AS t(id, customer_id, secret)`,
      [rows.map((r) => r.id), rows.map((r) => r.customer), url, now, rows.map((r) => r.secret)],
    );
    await ds.query(
      `INSERT INTO webhook_subscriptions (webhook_id, customer_id, event, subreddit, created_at)
       SELECT t.id, t.customer_id, 'trends.surge', $3, $4::bigint FROM unnest($1::varchar[], $2::varchar[]) AS t(id, customer_id)`,
      [rows.map((r) => r.id), rows.map((r) => r.customer), subreddit, now],
    );
    return;
  }
  const db = (ds.driver as unknown as { databaseConnection: SqliteDatabase }).databaseConnection;
  const endpoint = db.prepare('INSERT INTO webhooks (id, customer_id, url, allow_nonstandard_port, secret, created_at) VALUES (?, ?, ?, 0, ?, ?)');
  const subscription = db.prepare("INSERT INTO webhook_subscriptions (webhook_id, customer_id, event, subreddit, created_at) VALUES (?, ?, 'trends.surge', ?, ?)");
  db.transaction(() =>
    rows.forEach((r) => {
      endpoint.run(r.id, r.customer, url, r.secret, now);
      subscription.run(r.id, r.customer, subreddit, now);
    }),
  )();
}

describe.each(testDatabases())('fan-out at scale on %s', (name, makeDb) => {
  let t: TestApp;
  let ds: DataSource;

  beforeAll(async () => {
    // API only: no worker sending 10,000 deliveries, so every row stays pending for the counts.
    t = await startTestApp(makeDb(), { role: 'api' });
    ds = t.app.get<DataSource>(getDataSourceToken());
    await insertWebhooks(ds, SUBSCRIBERS, 'fanoutscale');
    await insertWebhooks(ds, 100, 'fanoutother'); // same event kind, another subreddit: not subscribers
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  const count = async (eventId: string) => {
    const p = name === 'postgres' ? '$1' : '?';
    const [row] = (await ds.query(
      `SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS ids, SUM(CASE WHEN state = 'pending' THEN 1 ELSE 0 END) AS pending FROM deliveries WHERE event_id = ${p}`,
      [eventId],
    )) as { n: string | number; ids: string | number; pending: string | number }[];
    return { n: Number(row.n), ids: Number(row.ids), pending: Number(row.pending) };
  };

  it(`fans one event out to ${SUBSCRIBERS.toLocaleString('en')} webhooks, each once, and a replay creates nothing`, async () => {
    const events = t.app.get(EventsService);
    // Another subreddit's event reaches only its own 100 webhooks.
    expect((await events.emit({ type: 'trends.surge', subreddit: 'fanoutother', data: {} })).deliveries).toBe(100);

    const id = `evt_fanout_scale_${Date.now()}`;
    const res = await events.emit({ id, type: 'trends.surge', subreddit: 'fanoutscale', data: { count: 4200 } });
    expect(res).toEqual({ event_id: id, created: true, deliveries: SUBSCRIBERS });
    expect(await count(id)).toEqual({ n: SUBSCRIBERS, ids: SUBSCRIBERS, pending: SUBSCRIBERS });

    expect(await events.emit({ id, type: 'trends.surge', subreddit: 'fanoutscale', data: { count: 4200 } })).toEqual({
      event_id: id,
      created: false,
      deliveries: 0,
    });
    expect((await count(id)).n).toBe(SUBSCRIBERS);
  }, 60_000);
});

// SQLite writes a fan-out in short synchronous slices (src/delivery/queue/sqlite): the event loop
// keeps serving while one event reaches 50,000 webhooks, and a fan-out cut short by a crash is
// finished by the event's replay. PostgreSQL writes a fan-out as one statement off the loop.
describe.each(testDatabases().filter(([name]) => name === 'sqlite'))('sliced fan-out on %s', (_name, makeDb) => {
  const BIG = 50_000;
  let t: TestApp;
  let ds: DataSource;

  beforeAll(async () => {
    t = await startTestApp(makeDb(), { role: 'api' });
    ds = t.app.get<DataSource>(getDataSourceToken());
    await insertWebhooks(ds, BIG, 'fanoutbig');
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  const count = async (eventId: string) => Number(((await ds.query('SELECT COUNT(*) AS n FROM deliveries WHERE event_id = ?', [eventId])) as { n: number }[])[0].n);

  it(`fans one event out to ${BIG.toLocaleString('en')} webhooks without blocking the event loop`, async () => {
    const events = t.app.get(EventsService);
    const id = `evt_fanout_big_${Date.now()}`;
    // The longest gap between ticks of a 1 ms interval timer: how long the loop was held.
    let last = performance.now();
    let longest = 0;
    const tick = setInterval(() => {
      const t = performance.now();
      longest = Math.max(longest, t - last);
      last = t;
    }, 1);
    await new Promise((r) => setTimeout(r, 20));
    let res;
    try {
      res = await events.emit({ id, type: 'trends.surge', subreddit: 'fanoutbig', data: {} });
      await new Promise((r) => setTimeout(r, 5)); // a last tick after the emit's last slice
    } finally {
      clearInterval(tick);
    }
    expect(res).toEqual({ event_id: id, created: true, deliveries: BIG });
    expect(await count(id)).toBe(BIG);
    // The slices last about 8 ms; written as one transaction the fan-out held the loop for seconds.
    // A generous bound, so a loaded CI machine does not fail it (bench:delivery reports the real figure).
    expect(longest).toBeLessThan(200);
  }, 120_000);

  it('finishes a fan-out cut short, when the event is replayed, and only then', async () => {
    const events = t.app.get(EventsService);
    const id = `evt_fanout_cut_${Date.now()}`;
    expect((await events.emit({ id, type: 'trends.surge', subreddit: 'fanoutbig', data: {} })).deliveries).toBe(BIG);
    // What a crash between slices leaves: the event and the deliveries of the first subscribers in the source's order (oldest first).
    await ds.query(
      "DELETE FROM deliveries WHERE event_id = ? AND webhook_id IN (SELECT webhook_id FROM webhook_subscriptions WHERE event = 'trends.surge' AND subreddit = 'fanoutbig' ORDER BY webhook_id LIMIT -1 OFFSET 1001)",
      [id],
    );
    expect(await count(id)).toBe(1001);
    expect(await events.emit({ id, type: 'trends.surge', subreddit: 'fanoutbig', data: {} })).toEqual({ event_id: id, created: false, deliveries: BIG - 1001 });
    expect(await count(id)).toBe(BIG);
    expect(await events.emit({ id, type: 'trends.surge', subreddit: 'fanoutbig', data: {} })).toEqual({ event_id: id, created: false, deliveries: 0 });
  }, 120_000);
});
