import { deliveryId } from '../../src/delivery/delivery-id';
import { EventsService } from '../../src/delivery/events.service';
import { DeliveryQueue } from '../../src/delivery/queue/delivery-queue';
import type { AttemptEntity } from '../../src/delivery/attempt.entity';
import { testDatabases } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';
import { TestDnsServer } from '../support/dns-server';
import { makeCert, Receiver, sleep, TestCert } from '../support/receiver';

/**
 * Issue #25 item 2: 100 of one customer's webhooks whose names stop resolving after they were
 * created. An attempt resolves its destination inside its worker slot and may wait up to the DNS
 * timeout (5 s here). Each customer has a share of lookups waiting on the nameservers per worker
 * (an eighth of the concurrency: 8 of 64); past it an attempt fails at once as a `dns_failure`,
 * retried on the schedule, and gives its slot back. So one customer's dead names hold at most
 * its share of the slots for the timeout, and another customer's deliveries stay fast. A real DNS
 * server on 127.0.0.1.
 */
const HANGING = 100;
const DNS_TIMEOUT_MS = 5000;
/** The default share: an eighth of the default concurrency (64). */
const DNS_SHARE = 8;
const FAST_MS = 2000;
const MEDIAN_MS = 1000;

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
        SSRF_DNS_TIMEOUT_MS: String(DNS_TIMEOUT_MS),
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

  it("fails one customer's attempts past its DNS share at once (retried dns_failure) and delivers another customer's events within 2 s while 100 of its names hang", async () => {
    const subreddit = `dnsd${Math.random().toString(36).slice(2, 10)}`;
    const a = await t.customer();
    const b = await t.customer();
    const create = async (auth: Record<string, string>, url: string): Promise<string> => {
      const res = await t.http().post('/v1/webhooks').set(auth).send({ url, event: 'trends.surge', subreddit, allow_nonstandard_port: true });
      expect(res.status).toBe(201);
      return res.body.data.id as string;
    };
    // A's come first, so its deliveries are ahead of B's in each fan-out.
    const aHooks: string[] = [];
    for (let i = 0; i < HANGING; i++) aHooks.push(await create(a.auth, `https://a${i}.flip.test:${rx.port}/hook`));
    await create(b.auth, rx.namedUrl('/b'));
    dns.blackHole = (name) => name.endsWith('.flip.test');

    const took: number[] = [];
    let firstEvent = '';
    for (let n = 1; n <= 3; n++) {
      const t0 = Date.now();
      const emitted = await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { n } });
      if (n === 1) firstEvent = emitted.event_id;
      await rx.waitUntil((r) => r.filter((x) => x.path === '/b').length >= n, 15_000, `B's delivery ${n}`);
      took.push(rx.received.filter((x) => x.path === '/b')[n - 1].at - t0);
      await sleep(300);
    }

    // A's deliveries of the first event: each has its first attempt once the lookups that got a
    // place have timed out.
    const queue = t.app.get(DeliveryQueue);
    const ids = aHooks.map((w) => deliveryId(firstEvent, w));
    let attempts: AttemptEntity[] = [];
    for (const until = Date.now() + 3 * DNS_TIMEOUT_MS; Date.now() < until; await sleep(100)) {
      attempts = await queue.attemptsFor(ids);
      if (attempts.length >= HANGING) break;
    }
    expect(attempts.map((x) => `${x.attemptNo} ${x.outcome} ${x.errorClass}`)).toEqual(Array(HANGING).fill('1 transient dns_failure'));
    // At most the share waited for the nameservers; the others were refused at once, saying why.
    const waited = attempts.filter((x) => x.durationMs >= 1000);
    const refused = attempts.filter((x) => x.durationMs < 1000);
    expect({ waited: waited.length <= DNS_SHARE, refused: refused.length >= HANGING - DNS_SHARE }).toEqual({ waited: true, refused: true });
    for (const x of refused) expect(x.responseExcerpt).toContain(`too many DNS lookups in progress for this customer (at most ${DNS_SHARE} at once)`);
    // Not lost: each is due again on the schedule (30 s, ±20 %).
    const now = Date.now();
    for (const [i, id] of ids.entries()) {
      const d = await queue.findForWebhook(aHooks[i], id);
      expect({ state: d?.state, lastError: d?.lastError, later: (d?.nextAttemptAt?.getTime() ?? 0) > now + 15_000 }).toEqual({ state: 'pending', lastError: 'dns_failure', later: true });
    }

    // A's names were asked at delivery time, and nothing of A's arrived.
    expect(dns.queriesFor('a0.flip.test')).toBeGreaterThanOrEqual(1);
    expect(rx.received.filter((x) => x.path !== '/b')).toEqual([]);
    const sorted = [...took].sort((x, y) => x - y);
    expect({ took, max: sorted[2] <= FAST_MS, median: sorted[1] <= MEDIAN_MS }).toEqual({ took, max: true, median: true });
  }, 90_000);
});
