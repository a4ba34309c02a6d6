import { EventsService } from '../src/delivery/events.service';
import { testTargets } from './support/databases';
import { startTestApp, TestApp } from './support/app';
import { makeCert, Receiver, sleep, TestCert } from './support/receiver';

/**
 * One customer's endpoints that accept the request and never answer must not delay another
 * customer's deliveries: each worker keeps a reserve of its slots that no single customer (nor
 * destination) may take. The attempt timeout is the default's order (8 s), the concurrency the
 * default (64): without the reserve, 100 hanging deliveries fill every slot for the whole timeout.
 */
const ENV = (cert: TestCert) => ({
  SSRF_ALLOW_CIDRS: '127.0.0.1/32',
  DELIVERY_CA_FILE: cert.caFile,
  DELIVERY_RETRY_SCHEDULE: '30',
  DELIVERY_TIMEOUT_MS: '8000',
});

const HANGING = 100;
/** The victim's bound per delivery, emit to arrival (the 3 s, CLI start excluded here). */
const BOUND_MS = 3000;

describe.each(testTargets(['express']))('fair delivery scheduling on %s', (_name, makeDb, adapter) => {
  let t: TestApp;
  let cert: TestCert;
  let hanging: Receiver;
  let healthy: Receiver;

  beforeAll(async () => {
    cert = makeCert();
    t = await startTestApp(makeDb(), { adapter, env: ENV(cert) });
    hanging = await Receiver.start(cert);
    hanging.behaviour = () => ({ hang: true });
    healthy = await Receiver.start(cert);
  });
  afterAll(async () => {
    await hanging?.close();
    await healthy?.close();
    await t?.close();
  });

  async function webhook(auth: Record<string, string>, url: string, subreddit: string): Promise<string> {
    const res = await t.http().post('/v1/webhooks').set(auth).send({ url, event: 'trends.surge', subreddit, allow_nonstandard_port: true });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  }

  it("delivers another customer's events within 3 s while 100 of one customer's endpoints on the same subreddit hang", async () => {
    const subreddit = `fair${Math.random().toString(36).slice(2, 10)}`;
    const attacker = await t.customer('business');
    const victim = await t.customer('business');
    // The attacker's webhooks come first, so its deliveries are ahead of the victim's in every fan-out.
    for (let i = 0; i < HANGING; i++) await webhook(attacker.auth, hanging.url(`/hang/${i}`), subreddit);
    await webhook(victim.auth, healthy.url('/ok'), subreddit);

    const took: number[] = [];
    for (let n = 1; n <= 3; n++) {
      const t0 = Date.now();
      const res = await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { n } });
      expect(res.deliveries).toBe(HANGING + 1);
      await healthy.waitForCount(n, 15_000);
      took.push(healthy.received[n - 1].at - t0);
      await sleep(300);
    }
    expect(took.every((ms) => ms <= BOUND_MS)).toBe(true);
    // The attacker's endpoints were sent to (they hang; they are not starved either).
    expect(hanging.received.length).toBeGreaterThan(0);
  }, 60_000);

  it("answers another customer's test events within 1 s (median) while one customer floods test events to 100 hanging endpoints", async () => {
    const attacker = await t.customer('business');
    const victim = await t.customer('business');
    const subreddit = `fair${Math.random().toString(36).slice(2, 10)}`;
    const hooks: string[] = [];
    for (let i = 0; i < HANGING; i++) hooks.push(await webhook(attacker.auth, hanging.url(`/flood/${i}`), subreddit));
    const mine = await webhook(victim.auth, healthy.url('/test'), subreddit);
    const before = healthy.received.length;

    // ~15 test events a second from the attacker, for 6 s, while the victim sends one every 500 ms.
    let flooding = true;
    const flood = (async () => {
      for (let i = 0; flooding; i++) {
        void t.http().post(`/v1/webhooks/${hooks[i % hooks.length]}/test`).set(attacker.auth).then(() => undefined, () => undefined);
        await sleep(66);
      }
    })();
    await sleep(1500); // the attacker's attempts hold their share of the slots by now
    const took: number[] = [];
    for (let n = 1; n <= 8; n++) {
      const t0 = Date.now();
      const res = await t.http().post(`/v1/webhooks/${mine}/test`).set(victim.auth);
      expect(res.status).toBe(202);
      await healthy.waitForCount(before + n, 15_000);
      took.push(healthy.received[before + n - 1].at - t0);
      await sleep(500);
    }
    flooding = false;
    await flood;
    took.sort((a, b) => a - b);
    const median = took[Math.floor(took.length / 2)];
    expect({ took, median: median <= 1000, max: took[took.length - 1] <= 5000 }).toEqual({ took, median: true, max: true });
  }, 90_000);
});
