import * as fs from 'node:fs';
import { deliveryId } from '../../src/delivery/delivery-id';
import { EventsService } from '../../src/delivery/events.service';
import { EventEntity } from '../../src/delivery/event.entity';
import { TRENDHOOKS_DATA_SOURCE } from '../../src/database/data-source.token';
import type { DataSource } from 'typeorm';
import { newId } from '../../src/common/ids';
import { ShiftedClock, startTestApp, TestApp } from '../support/app';
import { testDatabases } from '../support/databases';
import { makeCert, Receiver, sleep, TestCert } from '../support/receiver';

/**
 * One customer's recover dry runs do not slow another customer (issue #38, finding 3). The
 * attacker's subreddit holds 12,000 events, from before its webhook (what the red team used) or,
 * the worst case once the walk starts at the webhook's creation, since it (so every dry run reads
 * its 10,000 rows); it fires 8 dry runs a second over the whole 14 days for 10 s, without waiting
 * for answers. Meanwhile another customer reads its webhook every 100 ms and gets one delivery
 * every 500 ms; both are timed. Bounds: the victim's GET p50 ≤ 1 s, max ≤ 5 s; its deliveries the same.
 */
const ATTACKER_EVENTS = 12_000;
const DRY_RUNS_PER_S = 8;
const FLOOD_MS = 10_000;
const DAY = 86_400_000;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

describe.each(testDatabases())('recover dry runs under load on %s', (dbName, makeDb) => {
  let cert: TestCert;
  let t: TestApp;
  let rx: Receiver;
  const clock = new ShiftedClock();

  beforeAll(async () => {
    cert = makeCert();
    t = await startTestApp(makeDb(), {
      clock,
      env: { SSRF_ALLOW_CIDRS: '127.0.0.1/32', DELIVERY_CA_FILE: cert.caFile, DELIVERY_POLL_INTERVAL_MS: '50', PLAN_RATE_LIMITS: 'business=100000' },
    });
    rx = await Receiver.start(cert);
  }, 60_000);
  afterAll(async () => {
    await rx?.close();
    await t?.close();
    if (cert) fs.rmSync(cert.dir, { recursive: true, force: true });
  });

  async function webhook(auth: Record<string, string>, subreddit: string): Promise<string> {
    const res = await t.http().post('/v1/webhooks').set(auth).send({ url: rx.namedUrl(), event: 'trends.surge', subreddit, allow_nonstandard_port: true });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  }

  /** `n` events of `subreddit` from `fromMs` on, `stepMs` apart, written in bulk (no delivery). */
  async function backfill(subreddit: string, fromMs: number, stepMs: number, n: number): Promise<void> {
    const repo = t.app.get<DataSource>(TRENDHOOKS_DATA_SOURCE).getRepository(EventEntity);
    for (let i = 0; i < n; i += 500) {
      const chunk = Array.from({ length: Math.min(500, n - i) }, (_, j) => {
        const at = fromMs + (i + j) * stepMs;
        return { id: newId('evt', at), type: 'trends.surge', subreddit, payload: '{}', createdAt: new Date(at) };
      });
      await repo.insert(chunk);
    }
  }

  it.each(['before', 'since'] as const)("keeps another customer's GET and deliveries under 1 s (p50) and 5 s (max) during 8 dry runs a second, the events %s the webhook", async (when) => {
    const attacker = await t.customer();
    const victim = await t.customer();
    const sub = `rl${Math.random().toString(36).slice(2, 12)}`;
    if (when === 'before') await backfill(sub, clock.now().getTime() - 13 * DAY, 60_000, ATTACKER_EVENTS);
    const target = await webhook(attacker.auth, sub);
    if (when === 'since') await backfill(sub, clock.now().getTime() + 1, 1, ATTACKER_EVENTS);
    clock.offsetMs += 60_000;
    const victimSub = `rv${Math.random().toString(36).slice(2, 12)}`;
    const mine = await webhook(victim.auth, victimSub);
    const since = new Date(clock.now().getTime() - 14 * DAY + 60_000).toISOString();

    const statuses = new Map<number, number>();
    const gets: number[] = [];
    const sentAt = new Map<string, number>();
    let flooding = true;
    const flood = (async () => {
      const inFlight: Promise<unknown>[] = [];
      const end = Date.now() + FLOOD_MS;
      while (Date.now() < end) {
        inFlight.push(
          t
            .http()
            .post(`/v1/webhooks/${target}/recover`)
            .set(attacker.auth)
            .send({ since, dry_run: true })
            .then((r) => statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)),
        );
        await sleep(1000 / DRY_RUNS_PER_S);
      }
      await Promise.all(inFlight);
      flooding = false;
    })();
    const reads = (async () => {
      while (flooding) {
        const t0 = performance.now();
        const r = await t.http().get(`/v1/webhooks/${mine}`).set(victim.auth);
        expect(r.status).toBe(200);
        gets.push(performance.now() - t0);
        await sleep(100);
      }
    })();
    const emits = (async () => {
      const events = t.app.get(EventsService);
      while (flooding) {
        const at = Date.now();
        const res = await events.emit({ type: 'trends.surge', subreddit: victimSub, data: {} });
        sentAt.set(deliveryId(res.event_id, mine), at);
        await sleep(500);
      }
    })();
    await Promise.all([flood, reads, emits]);
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && rx.received.filter((r) => sentAt.has(String(r.headers['webhook-id']))).length < sentAt.size) await sleep(100);
    const lags = rx.received.filter((r) => sentAt.has(String(r.headers['webhook-id']))).map((r) => r.at - sentAt.get(String(r.headers['webhook-id']))!);

    const summary = {
      db: dbName,
      events: when,
      dry_runs: Object.fromEntries(statuses),
      get_ms: { n: gets.length, p50: Math.round(pct(gets, 50)), p95: Math.round(pct(gets, 95)), max: Math.round(Math.max(...gets)) },
      delivery_ms: { sent: sentAt.size, got: lags.length, p50: Math.round(pct(lags, 50)), max: Math.round(Math.max(...lags)) },
    };
    console.log(`recover-load ${JSON.stringify(summary)}`);
    expect(lags.length).toBe(sentAt.size);
    expect(pct(gets, 50)).toBeLessThanOrEqual(1000);
    expect(Math.max(...gets)).toBeLessThanOrEqual(5000);
    expect(pct(lags, 50)).toBeLessThanOrEqual(1000);
    expect(Math.max(...lags)).toBeLessThanOrEqual(5000);
  }, 180_000);
});
