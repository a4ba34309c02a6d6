import type { ChildProcess } from 'node:child_process';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EventsService } from '../src/delivery/events.service';
import { testDatabases } from './support/databases';
import { startTestApp, TestApp } from './support/app';
import { makeCert, Receiver, sleep, TestCert } from './support/receiver';
import { pollUntil, spawnServe, stopProcess } from './support/processes';

describe.each(testDatabases())('worker processes on %s', (name, makeDb) => {
  let t: TestApp;
  let cert: TestCert;
  let rx: Receiver;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    cert = makeCert();
    // This process only serves the API and emits; the workers are separate processes.
    t = await startTestApp(makeDb(), { role: 'api', env: { SSRF_ALLOW_CIDRS: '127.0.0.1/32' } });
    rx = await Receiver.start(cert);
  });
  afterAll(async () => {
    await Promise.all(children.map(stopProcess));
    await rx?.close();
    await t?.close();
  });

  async function deliveredCount(ids: string[]): Promise<number> {
    const ds = t.app.get<DataSource>(getDataSourceToken());
    const rows: { n: string | number }[] = await ds.query(
      `SELECT COUNT(*) AS n FROM deliveries WHERE state = 'delivered' AND id IN (${ids.map((_, i) => (name === 'postgres' ? `$${i + 1}` : '?')).join(', ')})`,
      ids,
    );
    return Number(rows[0].n);
  }

  async function subscribeAndEmit(n: number): Promise<string[]> {
    const c = await t.customer();
    const subreddit = `crash${Math.random().toString(36).slice(2, 10)}`;
    const res = await t.http().post('/v1/webhooks').set(c.auth).send({ url: rx.url(), event: 'trends.rising', subreddit, allow_nonstandard_port: true });
    expect(res.status).toBe(201);
    const events = t.app.get(EventsService);
    for (let i = 0; i < n; i++) await events.emit({ type: 'trends.rising', subreddit, data: { i } });
    const rows: { id: string }[] = await t.app.get<DataSource>(getDataSourceToken()).query(
      name === 'postgres' ? 'SELECT id FROM deliveries WHERE webhook_id = $1' : 'SELECT id FROM deliveries WHERE webhook_id = ?',
      [res.body.data.id],
    );
    expect(rows).toHaveLength(n);
    return rows.map((r) => r.id);
  }

  it('loses nothing when a worker is SIGKILLed mid-batch: every delivery arrives, repeats keep their id', async () => {
    rx.received.length = 0;
    rx.behaviour = () => ({ status: 200, delayMs: 100 });
    const ids = await subscribeAndEmit(150);
    const first = spawnServe(t, cert);
    children.push(first);
    await rx.waitForCount(30, 30_000);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const atKill = rx.received.length;
    expect(atKill).toBeLessThan(150); // it really died mid-way

    const second = spawnServe(t, cert);
    children.push(second);
    const want = new Set(ids);
    await rx.waitUntil((r) => ids.every((id) => r.some((x) => x.headers['webhook-id'] === id)), 60_000, 'every delivery id').catch((e) => {
      throw new Error(`${e.message}\nworker output:\n${second.output.join('')}`);
    });
    // …and the database agrees: all delivered (rows the dead worker had leased come back after the lease).
    expect(await pollUntil(() => deliveredCount(ids), (n) => n === ids.length, 20_000)).toBe(ids.length);
    expect(second.exitCode).toBeNull(); // an idle worker stays up
    const counts = new Map<string, number>();
    for (const r of rx.received) counts.set(String(r.headers['webhook-id']), (counts.get(String(r.headers['webhook-id'])) ?? 0) + 1);
    for (const id of counts.keys()) expect(want.has(id)).toBe(true);
    // Only what the dead worker had in flight (its concurrency) can arrive twice.
    const repeats = [...counts.values()].filter((n) => n > 1).length;
    expect(repeats).toBeLessThanOrEqual(8);
    await stopProcess(second);
  }, 120_000);

  if (name === 'postgres') {
    it('two workers never send one delivery twice while its lease holds', async () => {
      rx.received.length = 0;
      rx.behaviour = () => ({ status: 200, delayMs: 5 });
      // A generous attempt timeout: a retry after a timeout would be a legitimate second send, and this
      // test is about the lease, so on a busy 2-core machine no attempt may time out.
      const slow = { DELIVERY_TIMEOUT_MS: '8000', DELIVERY_LEASE_MS: '15000' };
      const a = spawnServe(t, cert, slow);
      const b = spawnServe(t, cert, slow);
      children.push(a, b);
      await sleep(1500); // both up and LISTENing
      const ids = await subscribeAndEmit(300);
      const mine = new Set(ids);
      const seenOf = (r: typeof rx.received) => r.map((x) => String(x.headers['webhook-id'])).filter((id) => mine.has(id));
      await rx.waitUntil((r) => new Set(seenOf(r)).size >= ids.length, 60_000, 'all 300 deliveries');
      expect(await pollUntil(() => deliveredCount(ids), (n) => n === ids.length, 10_000)).toBe(ids.length);
      await sleep(500);
      const seen = seenOf(rx.received);
      expect(seen).toHaveLength(300);
      expect(new Set(seen).size).toBe(300);
      await Promise.all([stopProcess(a), stopProcess(b)]);
    }, 120_000);
  }
});
