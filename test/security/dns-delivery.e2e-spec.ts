import { EventsService } from '../../src/delivery/events.service';
import { testDatabases } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';
import { TestDnsServer } from '../support/dns-server';
import { makeCert, Receiver, sleep, TestCert } from '../support/receiver';

/**
 * Issue #25 item 2: 100 of one customer's webhooks whose names stop resolving after they were
 * created. Each attempt waits for DNS inside its worker slot (up to the DNS timeout, 5 s here);
 * the per-customer lookup limit lets 8 lookups run and 64 more wait, which used to be every slot
 * of the worker. Now one customer holds at most its share of the slots (concurrency minus the
 * reserve), so another customer's deliveries stay fast. A real DNS server on 127.0.0.1.
 */
const HANGING = 100;
const FAST_MS = 2000;

describe.each(testDatabases())('DNS that stops answering for one customer, at delivery, on %s', (_name, makeDb) => {
  let t: TestApp;
  let dns: TestDnsServer;
  let cert: TestCert;
  let rx: Receiver;

  beforeAll(async () => {
    const records: Record<string, string[]> = { 'receiver.test': ['127.0.0.1'] };
    for (let i = 0; i < HANGING; i++) records[`a${i}.flip.test`] = ['127.0.0.1'];
    dns = await TestDnsServer.start(records);
    cert = makeCert();
    rx = await Receiver.start(cert);
    t = await startTestApp(makeDb(), {
      systemDns: true,
      env: {
        SSRF_DNS_SERVERS: dns.address,
        SSRF_DNS_TIMEOUT_MS: '5000',
        SSRF_DNS_CACHE_TTL_MS: '0',
        SSRF_ALLOW_CIDRS: '127.0.0.1/32',
        DELIVERY_CA_FILE: cert.caFile,
        DELIVERY_RETRY_SCHEDULE: '30',
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
    await dns?.close();
  });

  it("delivers another customer's events within 2 s while 100 of one customer's names hang in DNS", async () => {
    const subreddit = `dnsd${Math.random().toString(36).slice(2, 10)}`;
    const a = await t.customer();
    const b = await t.customer();
    const create = async (auth: Record<string, string>, url: string) => {
      const res = await t.http().post('/v1/webhooks').set(auth).send({ url, event: 'trends.surge', subreddit, allow_nonstandard_port: true });
      expect(res.status).toBe(201);
    };
    // A's come first, so its deliveries are ahead of B's in each fan-out.
    for (let i = 0; i < HANGING; i++) await create(a.auth, `https://a${i}.flip.test:${rx.port}/hook`);
    await create(b.auth, rx.namedUrl('/b'));
    dns.blackHole = (name) => name.endsWith('.flip.test');

    const took: number[] = [];
    for (let n = 1; n <= 3; n++) {
      const t0 = Date.now();
      await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { n } });
      await rx.waitUntil((r) => r.filter((x) => x.path === '/b').length >= n, 15_000, `B's delivery ${n}`);
      took.push(rx.received.filter((x) => x.path === '/b')[n - 1].at - t0);
      await sleep(300);
    }
    // A's names were asked at delivery time, and nothing of A's arrived.
    expect(dns.queriesFor('a0.flip.test')).toBeGreaterThanOrEqual(1);
    expect(rx.received.filter((x) => x.path !== '/b')).toEqual([]);
    expect(took.map((ms) => ms <= FAST_MS)).toEqual([true, true, true]);
  }, 90_000);
});
