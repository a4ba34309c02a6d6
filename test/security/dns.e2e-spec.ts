import request from 'supertest';
import { EventsService } from '../../src/delivery/events.service';
import { testDatabases } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';
import { TestDnsServer } from '../support/dns-server';
import { makeCert, Receiver, sleep, TestCert } from '../support/receiver';

/**
 * Issue #12 item 2: one customer's webhooks on names whose DNS never answers must not slow
 * another customer down. A real DNS server on 127.0.0.1 answers the names of customer B and
 * drops every query under blackhole.test (customer A's); the app uses the real resolver,
 * pointed at it with SSRF_DNS_SERVERS. With getaddrinfo, A's first four lookups held libuv's
 * four threads until the OS gave up, and B's creates and deliveries queued behind them.
 */

/** Names B uses; the certificate of the receiver names receiver.test. */
export const DNS_E2E_RECORDS: Record<string, string[]> = {
  'receiver.test': ['127.0.0.1'],
  ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`b${i}.ok.test`, ['127.0.0.1']])),
};
export const isBlackHole = (name: string) => name.endsWith('.blackhole.test');

const DNS_TIMEOUT_MS = 4000;
/** A healthy create or delivery takes tens of milliseconds; a stalled one waits for the DNS timeout. */
const FAST_MS = 2000;
const STORM = 24;

describe.each(testDatabases())('slow DNS of one customer on %s', (_name, makeDb) => {
  let t: TestApp;
  let dns: TestDnsServer;
  let cert: TestCert;
  let rx: Receiver;
  let storms = 0;
  /** Customer B's webhook for the delivery test, made before any storm. */
  let receiverHook: { auth: Record<string, string>; id: string; subreddit: string };

  beforeAll(async () => {
    dns = await TestDnsServer.start(DNS_E2E_RECORDS, { blackHole: isBlackHole });
    cert = makeCert();
    rx = await Receiver.start(cert);
    t = await startTestApp(makeDb(), {
      systemDns: true,
      env: {
        SSRF_DNS_SERVERS: dns.address,
        SSRF_DNS_TIMEOUT_MS: String(DNS_TIMEOUT_MS),
        // Every lookup of B's names reaches the DNS server during A's storm: no cached shortcut.
        SSRF_DNS_CACHE_TTL_MS: '0',
        SSRF_DNS_MAX_CONCURRENT_PER_CUSTOMER: '2',
        SSRF_ALLOW_CIDRS: '127.0.0.1/32',
        DELIVERY_CA_FILE: cert.caFile,
        DELIVERY_POLL_INTERVAL_MS: '50',
        DELIVERY_TIMEOUT_MS: '2000',
        DELIVERY_LEASE_MS: '8000',
        DELIVERY_RETRY_SCHEDULE: '0.2,0.4',
      },
    });
    const b = await t.customer();
    const subreddit = `dns${Math.random().toString(36).slice(2, 10)}`;
    const made = await create(b.auth, rx.namedUrl(), subreddit);
    expect(made.status).toBe(201);
    receiverHook = { auth: b.auth, id: made.body.data.id, subreddit };
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
    await dns?.close();
  });

  const create = (auth: Record<string, string>, url: string, subreddit = 'dnsstorm') =>
    t.http().post('/v1/webhooks').set(auth).send({ url, event: 'trends.surge', subreddit, allow_nonstandard_port: true });

  /** Customer A fires STORM concurrent creates for names nobody answers; resolves when all have been answered. */
  async function storm(): Promise<{ done: () => boolean; settled: Promise<request.Response[]> }> {
    const a = await t.customer();
    const round = storms++;
    let finished = false;
    const settled = Promise.all(Array.from({ length: STORM }, (_, i) => create(a.auth, `https://a${round}-${i}.blackhole.test/hook`).then((r) => r))).finally(() => {
      finished = true;
    });
    // Until A's queries have reached the DNS server (and so are stuck there).
    const until = Date.now() + 2000;
    while (dns.queries.filter((q) => q.name.startsWith(`a${round}-`)).length < 2 && Date.now() < until) await sleep(10);
    return { done: () => finished, settled };
  }

  /** A's answers: each a clear error in the envelope, never a 500 and never a success. */
  function expectAllRefused(responses: request.Response[]) {
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 422 || s === 429)).toBe(true);
    for (const r of responses) {
      expect(r.body.error.request_id).toBe(r.headers['x-request-id']);
      if (r.status === 422) {
        expect(r.body.error).toMatchObject({ code: 'WEBHOOK_DESTINATION_BLOCKED', message: expect.stringMatching(/^destination host a\d+-\d+\.blackhole\.test could not be resolved: DNS lookup timed out after \d+ ms$/) });
      } else {
        expect(r.body.error).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('too many DNS lookups in progress for this customer (at most 2 at once)') });
        expect(r.headers['retry-after']).toBe(String(DNS_TIMEOUT_MS / 1000));
      }
    }
    // Two lookups at a time, sixteen waiting: the rest are refused at once.
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(STORM - 2 - 16);
  }

  it("keeps another customer's creates fast while one customer's lookups hang", async () => {
    const b = await t.customer();
    const a = await storm();
    const took: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = Date.now();
      const res = await create(b.auth, `https://b${i}.ok.test:${rx.port}/hook`);
      took.push(Date.now() - t0);
      expect([res.status, res.body.error?.message]).toEqual([201, undefined]);
    }
    // B's names were really asked of the DNS server, during A's storm.
    expect(dns.queriesFor('b4.ok.test')).toBeGreaterThanOrEqual(1);
    expect(a.done()).toBe(false);
    expect(Math.max(...took)).toBeLessThan(FAST_MS);
    expectAllRefused(await a.settled);
  });

  it("keeps another customer's deliveries fast (no dns_failure) while one customer's lookups hang", async () => {
    const { auth, id, subreddit } = receiverHook;
    const before = rx.received.length;
    const asked = dns.queriesFor('receiver.test');
    const a = await storm();
    const t0 = Date.now();
    await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { count: 1 } });
    await rx.waitForCount(before + 1, FAST_MS);
    expect(Date.now() - t0).toBeLessThan(FAST_MS);
    // The attempt re-resolved receiver.test (cache off) while A's lookups were stuck.
    expect(dns.queriesFor('receiver.test')).toBeGreaterThan(asked);
    expect(a.done()).toBe(false);
    // The outcome is written just after the receiver answered.
    let attempts: unknown[] = [];
    for (const end = Date.now() + 2000; attempts.length === 0 && Date.now() < end; await sleep(25)) {
      const res = await t.http().get(`/v1/webhooks/${id}/deliveries`).set(auth);
      expect(res.status).toBe(200);
      attempts = res.body.data[0]?.attempts ?? [];
    }
    expect(attempts).toEqual([expect.objectContaining({ attempt: 1, outcome: 'delivered', error_class: null })]);
    expectAllRefused(await a.settled);
  });
});
