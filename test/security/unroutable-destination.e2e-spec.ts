import { EventsService } from '../../src/delivery/events.service';
import { testDatabases } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';
import { makeCert, Receiver, TestCert } from '../support/receiver';
import { pollUntil } from '../support/processes';

/**
 * A destination the machine has no route to (issue #12): the common case is a public AAAA-only
 * name on a host without IPv6, where connect(2) fails at once with ENETUNREACH. On loopback the
 * same failure comes from 127.255.255.255, the broadcast address of lo's 127.0.0.0/8: the kernel
 * refuses a TCP connect to it inside connect(2) and nothing is sent. Before the pinned lookup
 * answered asynchronously, the first attempt ended the whole process (here: the test runner)
 * with an unhandled 'error' event.
 */
describe.each(testDatabases())('an unroutable destination, on %s', (_name, makeDb) => {
  let t: TestApp;
  let cert: TestCert;
  let rx: Receiver;

  beforeAll(async () => {
    cert = makeCert();
    // The worker runs in this process: if an attempt could crash it, it would crash the suite.
    t = await startTestApp(makeDb(), {
      env: {
        SSRF_ALLOW_CIDRS: '127.0.0.0/8',
        DELIVERY_CA_FILE: cert.caFile,
        DELIVERY_RETRY_SCHEDULE: '0.2,0.4,0.8',
        DELIVERY_POLL_INTERVAL_MS: '50',
        DELIVERY_TIMEOUT_MS: '1000',
        DELIVERY_LEASE_MS: '7000',
      },
    });
    t.dns.set('unroutable.test', ['127.255.255.255']);
    rx = await Receiver.start(cert);
  });
  afterAll(async () => {
    await rx?.close();
    await t?.close();
  });

  it('records each refused connect as a transient attempt, fails after the schedule, and keeps delivering to others', async () => {
    const c = await t.customer();
    const tag = Math.random().toString(36).slice(2, 8);
    const create = (url: string, subreddit: string) =>
      t.http().post('/v1/webhooks').set(c.auth).send({ url, event: 'trends.rising', subreddit, allow_nonstandard_port: true });
    const bad = await create('https://unroutable.test/hook', `unroutable${tag}`);
    expect(bad.status).toBe(201);
    const good = await create(rx.url(), `routable${tag}`);
    expect(good.status).toBe(201);

    const events = t.app.get(EventsService);
    await events.emit({ type: 'trends.rising', subreddit: `unroutable${tag}`, data: { n: 1 } });
    await events.emit({ type: 'trends.rising', subreddit: `routable${tag}`, data: { n: 2 } });

    const list = () => t.http().get(`/v1/webhooks/${bad.body.data.id}/deliveries`).set(c.auth);
    const res = await pollUntil(list, (r) => r.body.data?.[0]?.state === 'failed', 20_000);
    const [d] = res.body.data;
    expect(d).toMatchObject({ state: 'failed', attempt_count: 4, last_error: 'network_error' });
    expect(d.attempts).toHaveLength(4);
    for (const [i, a] of (d.attempts as { attempt: number; outcome: string; error_class: string; status_code: number | null; response_excerpt: string }[]).entries()) {
      expect(a).toMatchObject({ attempt: i + 1, outcome: 'transient', error_class: 'network_error', status_code: null });
      expect(a.response_excerpt).toContain('ENETUNREACH');
    }
    // The same worker delivered the other webhook's event meanwhile.
    await rx.waitForCount(1, 10_000);
    const ok = await t.http().get(`/v1/webhooks/${good.body.data.id}/deliveries`).set(c.auth);
    expect(ok.body.data).toEqual([expect.objectContaining({ state: 'delivered', attempt_count: 1 })]);
  }, 60_000);
});
