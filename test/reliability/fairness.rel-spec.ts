import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { EventsService } from '../../src/delivery/events.service';
import { startTestApp, TestApp } from '../support/app';
import { testDatabases } from '../support/databases';
import { CLI, databaseUrl, pollUntil, ServeProcess, spawnServe, stopProcess } from '../support/processes';
import { makeCert, Receiver, sleep, TestCert } from '../support/receiver';

/**
 * Fairness under attack (issue #25, item 1), as the issue measured it, with two real worker
 * processes (each keeping its reserve of slots, which no single customer takes) (`trendhooks serve --role worker`) at the default concurrency (64) and attempt
 * timeout (10 s): one customer's 100 webhooks accept the request and never answer.
 * - During a flood of test events to them (`POST /v1/webhooks/{id}/test`, just under the
 *   attacker's own limit for test events), another customer's test deliveries arrive within
 *   1 s (median) and 5 s (max) of the request.
 * - Two customers' 100 hanging endpoints each (over 10 hosts each), and the same with 100 fast
 *   endpoints mixed in (the hanging ones on other hosts, or paths of the fast host), do not hold
 *   a third customer's fan-out deliveries past 3 s.
 * - An event fanned out by the operator's CLI (`trendhooks events emit`) to the attacker's 100
 *   webhooks and the other customer's three reaches each of those three within 3 s of the CLI's
 *   spawn (its start included).
 */
const HANGING = 100;
/** Test events a second from the attacker: just under a Business plan's limit for them (a quarter of 1,200 a minute). */
const FLOOD_PER_S = 4.5;
const FLOOD_MS = 20_000;
const FAN_OUT_BOUND_MS = 3000;

describe.each(testDatabases())('fairness under attack on %s', (dbName, makeDb) => {
  let cert: TestCert;
  let t: TestApp;
  let hanging: Receiver;
  let healthy: Receiver;
  const workers: ServeProcess[] = [];

  beforeAll(async () => {
    cert = makeCert();
    // This process serves the API; the senders are two worker processes.
    t = await startTestApp(makeDb(), { role: 'api', env: { SSRF_ALLOW_CIDRS: '127.0.0.1/32' } });
    hanging = await Receiver.start(cert);
    hanging.behaviour = () => ({ hang: true });
    healthy = await Receiver.start(cert);
    const env = {
      DELIVERY_CONCURRENCY: '64',
      DELIVERY_TIMEOUT_MS: '10000',
      DELIVERY_RETRY_SCHEDULE: '5,300',
      // SQLite has no cross-process wake-up: its workers find new rows by polling.
      DELIVERY_POLL_INTERVAL_MS: '100',
      DELIVERY_LEASE_MS: '3000',
      // The circuit breaker off: the 100 endpoints share one host and port here, so it would
      // throttle the attacker to two attempts at once; an attacker spreading its endpoints over
      // many hosts is not slowed by it, and the slots' share alone must hold (with it on, the
      // flood's hanging requests drop from over 100 to about 50).
      DELIVERY_CIRCUIT_FAILURES: '0',
    };
    for (let i = 0; i < 2; i++) workers.push(spawnServe(t, cert, env));
    for (const w of workers) {
      await pollUntil(async () => w.output.join(''), (out) => out.includes('running') || w.exitCode !== null, 30_000);
      if (!w.output.join('').includes('running')) throw new Error(`a worker did not start:\n${w.output.join('').slice(-2000)}`);
    }
  });
  afterAll(async () => {
    await Promise.all(workers.map(stopProcess));
    await hanging?.close();
    await healthy?.close();
    await t?.close();
    if (cert) fs.rmSync(cert.dir, { recursive: true, force: true });
  });

  async function webhook(auth: Record<string, string>, url: string, subreddit: string): Promise<string> {
    const res = await t.http().post('/v1/webhooks').set(auth).send({ url, event: 'trends.surge', subreddit, allow_nonstandard_port: true });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  }

  /**
   * Three events emitted one second apart to `subreddit`, each fanned out to `deliveries`
   * webhooks, three of them the victim's at `healthy`: how long after each emit each of the
   * victim's deliveries arrived (ms).
   */
  async function victimFanOuts(subreddit: string, deliveries: number): Promise<number[]> {
    const took: number[] = [];
    for (let n = 1; n <= 3; n++) {
      const before = healthy.received.length;
      const t0 = Date.now();
      const res = await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { n } });
      expect(res.deliveries).toBe(deliveries);
      await healthy.waitForCount(before + 3, 30_000);
      took.push(...healthy.received.slice(before, before + 3).map((r) => r.at - t0));
      await sleep(1000);
    }
    return took;
  }

  function median(xs: number[]): number {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)];
  }

  it("keeps another customer's test deliveries within 1 s (median) and 5 s (max) during a test flood to 100 hanging endpoints", async () => {
    const subreddit = `flood${Math.random().toString(36).slice(2, 10)}`;
    const attacker = await t.customer('business');
    const victim = await t.customer('business');
    const hooks: string[] = [];
    for (let i = 0; i < HANGING; i++) hooks.push(await webhook(attacker.auth, hanging.url(`/flood/${i}`), subreddit));
    const mine = await webhook(victim.auth, healthy.url('/flood-victim'), subreddit);
    const before = healthy.received.length;

    let flooding = true;
    const statuses = new Map<number, number>();
    const flood = (async () => {
      for (let i = 0; flooding; i++) {
        void t
          .http()
          .post(`/v1/webhooks/${hooks[i % hooks.length]}/test`)
          .set(attacker.auth)
          .then((r) => statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1), () => undefined);
        await sleep(1000 / FLOOD_PER_S);
      }
    })();
    await sleep(3000); // the attacker's attempts hold what they can by now
    const took: number[] = [];
    const end = Date.now() + FLOOD_MS;
    for (let n = 1; Date.now() < end; n++) {
      const t0 = Date.now();
      const res = await t.http().post(`/v1/webhooks/${mine}/test`).set(victim.auth);
      expect(res.status).toBe(202);
      await healthy.waitForCount(before + n, 30_000);
      took.push(healthy.received[before + n - 1].at - t0);
      await sleep(500);
    }
    flooding = false;
    await flood;
    const accepted = statuses.get(202) ?? 0;
    process.stdout.write(
      `fairness [${dbName}] test flood: ${accepted} attacker test events accepted (${JSON.stringify(Object.fromEntries(statuses))}), ${hanging.received.length} hanging requests; ` +
        `victim: ${took.length} test deliveries, median ${median(took)} ms, max ${Math.max(...took)} ms\n`,
    );
    // The flood was real and within the attacker's limits.
    expect(accepted).toBeGreaterThan(FLOOD_PER_S * (FLOOD_MS / 1000) * 0.8);
    expect(hanging.received.length).toBeGreaterThan(100);
    expect({ took, median: median(took) <= 1000, max: Math.max(...took) <= 5000 }).toEqual({ took, median: true, max: true });
  }, 120_000);

  it("delivers a third customer's fan-out deliveries within 3 s while TWO customers' 100 endpoints each hang, spread over 10 hosts each", async () => {
    // Before the shrinking share: in each worker the first attacker took its share (56 of 64) and
    // the second the other 8, so the third customer waited for an attempt timeout (10 s). Their
    // endpoints are spread over 20 ports (10 each) so that no destination reaches its own cap.
    const subreddit = `two${Math.random().toString(36).slice(2, 10)}`;
    const attackers = [await t.customer('business'), await t.customer('business')];
    const victim = await t.customer('business');
    const ports: Receiver[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await Receiver.start(cert);
      r.behaviour = () => ({ hang: true });
      ports.push(r);
    }
    try {
      for (const [k, a] of attackers.entries()) for (let i = 0; i < HANGING; i++) await webhook(a.auth, ports[k * 10 + (i % 10)].url(`/two/${i}`), subreddit);
      for (let i = 0; i < 3; i++) await webhook(victim.auth, healthy.url(`/two-victim/${i}`), subreddit);

      const took = await victimFanOuts(subreddit, 2 * HANGING + 3);
      const held = ports.map((r) => r.received.length);
      process.stdout.write(`fairness [${dbName}] two attackers: victim deliveries ${took.join(', ')} ms after the emit; hanging requests per attacker ${held.slice(0, 10).reduce((a, b) => a + b)}, ${held.slice(10).reduce((a, b) => a + b)}\n`);
      // Both attackers were sent to (they hang): held to a share, not starved.
      expect(held.slice(0, 10).reduce((a, b) => a + b)).toBeGreaterThan(10);
      expect(held.slice(10).reduce((a, b) => a + b)).toBeGreaterThan(10);
      expect({ took, within: took.every((ms) => ms <= FAN_OUT_BOUND_MS) }).toEqual({ took, within: true });
    } finally {
      await Promise.all(ports.map((r) => r.close()));
    }
  }, 120_000);

  it("delivers each of another customer's deliveries of a fan-out emitted by the CLI within 3 s of its spawn, 100 of the attacker's endpoints hanging", async () => {
    const subreddit = `cli${Math.random().toString(36).slice(2, 10)}`;
    const attacker = await t.customer('business');
    const victim = await t.customer('business');
    for (let i = 0; i < HANGING; i++) await webhook(attacker.auth, hanging.url(`/cli/${i}`), subreddit);
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push(await webhook(victim.auth, healthy.url(`/cli-victim/${i}`), subreddit));

    const took: number[] = [];
    const cliMs: number[] = [];
    const afterExit: number[] = [];
    for (let n = 1; n <= 3; n++) {
      const before = healthy.received.length;
      const spawnedAt = Date.now();
      const cli = spawn(process.execPath, [CLI, 'events', 'emit', '--event', 'trends.surge', '--subreddit', subreddit, '--example', '--data', JSON.stringify({ count: n }), '--json'], {
        env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl(t.config.database), CURSOR_SECRET: t.config.cursor.secrets[0] },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      cli.stdout!.on('data', (d) => (out += String(d)));
      cli.stderr!.on('data', (d) => (out += String(d)));
      const code = await new Promise<number | null>((r) => cli.on('exit', r));
      const exitedAt = Date.now();
      cliMs.push(exitedAt - spawnedAt);
      expect({ code, out }).toEqual({ code: 0, out: expect.stringContaining(`"deliveries":${HANGING + 3}`) });
      await healthy.waitForCount(before + 3, 30_000);
      took.push(...healthy.received.slice(before, before + 3).map((r) => r.at - spawnedAt));
      afterExit.push(...healthy.received.slice(before, before + 3).map((r) => r.at - exitedAt));
      await sleep(1000);
    }
    process.stdout.write(
      `fairness [${dbName}] CLI fan-out: victim deliveries ${took.join(', ')} ms from the CLI's spawn (${afterExit.join(', ')} ms from its exit; the CLI ran ${cliMs.join(', ')} ms)\n`,
    );
    expect({ took, within: took.every((ms) => ms <= FAN_OUT_BOUND_MS) }).toEqual({ took, within: true });
  }, 120_000);

  it.each([
    ['on 10 other hosts each', false],
    ['as paths of the fast host itself', true],
  ])("delivers a third customer's fan-out deliveries within 3 s while TWO customers each mix 100 hanging endpoints (%s) with 100 fast ones", async (where, sameHost) => {
    // The fast endpoints' attempts end within milliseconds, so each attacker looked healthy
    // ("moving") while its hanging attempts were younger than a second: past its share, up to
    // the hard cap (56 of 64) for the first and into the reserve for the second, so the third
    // customer waited for an attempt timeout (10 s): 8.8-9 s on both databases. Last in the
    // suite: its hanging attempts and their retries keep the workers writing for a while after.
    const subreddit = `mix${Math.random().toString(36).slice(2, 10)}`;
    // Enterprise: 200 webhooks each (a Business plan holds 100).
    const attackers = [await t.customer('enterprise'), await t.customer('enterprise')];
    const victim = await t.customer('business');
    // Per attacker: a host that answers /mix-fast/ at once, and where its hanging endpoints are
    // (the same host, or 10 others).
    const fast = [await Receiver.start(cert), await Receiver.start(cert)];
    const hangingAt: Receiver[][] = [];
    for (const f of fast) {
      f.behaviour = (req) => (req.path.startsWith('/mix-fast/') ? { status: 200 } : { hang: true });
      const hosts: Receiver[] = [];
      if (sameHost) hosts.push(f);
      else {
        for (let i = 0; i < 10; i++) {
          const r = await Receiver.start(cert);
          r.behaviour = () => ({ hang: true });
          hosts.push(r);
        }
      }
      hangingAt.push(hosts);
    }
    const hangingRequests = (k: number) => hangingAt[k].reduce((n, r) => n + r.received.filter((x) => x.path.startsWith('/mix/')).length, 0);
    const fastRequests = (k: number) => fast[k].received.filter((x) => x.path.startsWith('/mix-fast/')).length;
    try {
      // Interleaved, so that every claim of an attacker's rows finds fast and hanging ones.
      for (const [k, a] of attackers.entries()) {
        for (let i = 0; i < HANGING; i++) {
          await webhook(a.auth, hangingAt[k][i % hangingAt[k].length].url(`/mix/${i}`), subreddit);
          await webhook(a.auth, fast[k].url(`/mix-fast/${i}`), subreddit);
        }
      }
      for (let i = 0; i < 3; i++) await webhook(victim.auth, healthy.url(`/mix-victim/${i}`), subreddit);

      const took = await victimFanOuts(subreddit, 4 * HANGING + 3);
      process.stdout.write(
        `fairness [${dbName}] two mixed attackers, hanging ${where}: victim deliveries ${took.join(', ')} ms after the emit; ` +
          `hanging requests per attacker ${hangingRequests(0)}, ${hangingRequests(1)}; fast ${fastRequests(0)}, ${fastRequests(1)}\n`,
      );
      // Both attackers were sent to, fast and hanging alike (held to a share, not starved; how
      // much depends on how many customers the suite's earlier cases left active).
      for (const k of [0, 1]) {
        expect(fastRequests(k)).toBeGreaterThan(0);
        expect(hangingRequests(k)).toBeGreaterThan(0);
      }
      expect({ took, within: took.every((ms) => ms <= FAN_OUT_BOUND_MS) }).toEqual({ took, within: true });
    } finally {
      await Promise.all([...fast, ...hangingAt.flat().filter((r) => !fast.includes(r))].map((r) => r.close()));
    }
  }, 120_000);
});
