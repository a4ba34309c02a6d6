import { randomInt } from 'node:crypto';
import * as fs from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { EventsService } from '../../src/delivery/events.service';
import { startTestApp, TestApp } from '../support/app';
import { CHAOS_KINDS, ChaosArrival, ChaosKind, ChaosReceiver, hash01, makeEcCert, pickWeighted } from '../support/chaos-receiver';
import { testDatabases } from '../support/databases';
import { pollUntil, ServeProcess, spawnServe, stopProcess } from '../support/processes';
import { sleep, TestCert } from '../support/receiver';

/**
 * Receiver chaos: a real worker process (`trendhooks serve --role worker`) sends 512 deliveries
 * to a real HTTPS receiver that answers each request at random — 2xx, slow 2xx, 500, 503 and 429
 * with and without Retry-After, 400/404/422, 301/302, a hang past the attempt timeout, a cut
 * connection. Once every delivery is final, each one is checked against the retry policy of
 * DECISIONS.md ("Deliveries"), with the receiver's own log of what it did as the ground truth.
 *
 * The answers are drawn from a seeded hash of (hook, event, attempt number), so CHAOS_SEED=<seed>
 * replays the same answers whatever order the requests arrive in (the jitter stays random).
 */
const SEED = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : randomInt(1, 2 ** 31 - 1);
const SCHEDULE_S = [0.1, 0.2, 0.3];
const MAX_ATTEMPTS = SCHEDULE_S.length + 1;
const JITTER = 0.2;
// Short (each hang costs this much), but far above the slowest in-time answer (200 ms after
// arrival): on a busy machine TLS handshakes alone took several hundred ms, and a 400 ms
// deadline turned in-time answers into timeouts.
const TIMEOUT_MS = 1200;
/**
 * An attempt the receiver answered (or cut) this close to the sender's deadline, or later, may
 * rightly end as a timeout: the sender's clock ran out first. Only the environment (TLS handshakes
 * on a loaded machine) makes that happen; the run reports how often.
 */
const DEADLINE_MARGIN_MS = 300;
const EVENT_TYPES = ['trends.surge', 'trends.velocity'] as const;
const HOOKS_PER_TYPE = 4;
const EVENTS_PER_TYPE = 64; // 2 types × 64 events × 4 hooks = 512 deliveries
const SUBREDDIT = 'chaosmonkeys';
const MIN_PER_KIND = 5;

type Weights = Record<ChaosKind, number>;
/** Each hook has a temperament, so that early successes, permanent failures and exhausted schedules are all common. */
const PROFILES: Record<string, Weights> = {
  steady: { ok: 55, slow: 12, http500: 4, http500_retry_after: 2, http503: 3, http503_retry_after: 3, http429: 3, http429_retry_after: 3, permanent: 4, redirect: 2, hang: 3, reset: 6 },
  flaky: { ok: 28, slow: 8, http500: 8, http500_retry_after: 4, http503: 6, http503_retry_after: 6, http429: 6, http429_retry_after: 6, permanent: 6, redirect: 4, hang: 7, reset: 11 },
  hostile: { ok: 7, slow: 4, http500: 13, http500_retry_after: 7, http503: 9, http503_retry_after: 9, http429: 9, http429_retry_after: 9, permanent: 2, redirect: 2, hang: 11, reset: 18 },
  picky: { ok: 25, slow: 5, http500: 6, http500_retry_after: 3, http503: 4, http503_retry_after: 4, http429: 4, http429_retry_after: 4, permanent: 22, redirect: 14, hang: 4, reset: 5 },
};
const TEMPERAMENTS = ['steady', 'flaky', 'hostile', 'picky'] as const;
const hookPath = (i: number) => `/hook/${i}`;
const temperamentOf = (path: string) => TEMPERAMENTS[Number(path.split('/').pop()) % TEMPERAMENTS.length];

interface Outcome {
  status_code: number | null;
  outcome: string;
  error_class: string | null;
}

/** What the sender must record for an attempt the receiver answered this way (classes from src/delivery/classify.ts). */
function expectedAttempt(a: ChaosArrival): Outcome {
  const { kind, status } = a.answer;
  if (kind === 'hang') return { status_code: null, outcome: 'transient', error_class: 'timeout' };
  if (kind === 'reset') return { status_code: null, outcome: 'transient', error_class: 'connection_reset' };
  if (kind === 'ok' || kind === 'slow') return { status_code: status!, outcome: 'delivered', error_class: null };
  if (kind === 'redirect') return { status_code: status!, outcome: 'permanent', error_class: `redirect_${status}` };
  if (kind === 'permanent') return { status_code: status!, outcome: 'permanent', error_class: `http_${status}` };
  return { status_code: status!, outcome: 'transient', error_class: `http_${status}` };
}

const TIMED_OUT: Outcome = { status_code: null, outcome: 'transient', error_class: 'timeout' };
const same = (a: Outcome, b: Outcome) => a.status_code === b.status_code && a.outcome === b.outcome && a.error_class === b.error_class;
const show = (o: Outcome) => JSON.stringify([o.status_code, o.outcome, o.error_class]);

interface ApiAttempt extends Outcome {
  attempt: number;
  response_excerpt: string | null;
  started_at: string;
  duration_ms: number;
}
interface ApiDelivery {
  id: string;
  event_id: string;
  webhook_id: string;
  state: string;
  attempt_count: number;
  next_attempt_at: string | null;
  last_error: string | null;
  last_response_code: number | null;
  delivered_at: string | null;
  attempts: ApiAttempt[];
}
interface Hook {
  id: string;
  secret: string;
  path: string;
  auth: Record<string, string>;
}

/** One recorded attempt, its time window by the sender's records, and the request the receiver got for it (if any). */
interface Pair {
  rec: ApiAttempt;
  start: number;
  end: number;
  arrival?: ChaosArrival;
  /** The sender got the receiver's answer (or cut), rather than timing out first. */
  answered: boolean;
}

interface Tally {
  delivered: number;
  failedPermanent: number;
  failedExhausted: number;
  attempts: number;
  /** Attempts that timed out before their request had reached the receiver. */
  unreached: number;
  /** Attempts whose answer came at or past the sender's deadline, rightly recorded as timeouts. */
  lateAnswers: number;
  ignoredRetryAfterGaps: number[];
}

/**
 * Checks one delivery against the policy, with the receiver's log as the ground truth. Pushes a
 * line per discrepancy to `fail`.
 */
function checkDelivery(d: ApiDelivery, arrivals: ChaosArrival[], hook: Hook, tally: Tally, fail: (msg: string) => void): void {
  const where = `seed ${SEED}, ${hook.path} (${temperamentOf(hook.path)}), ${d.id}`;
  const story = () =>
    `receiver: [${arrivals.map((a) => `${a.answer.kind}${a.answer.status ? ` ${a.answer.status}` : ''} at +${a.at - Date.parse(d.attempts[0]?.started_at ?? '0')}`).join(', ')}], ` +
    `recorded: ${JSON.stringify(d.attempts.map((x) => [x.status_code, x.error_class, x.duration_ms, x.response_excerpt?.slice(0, 120)]))}, state ${d.state}`;
  tally.attempts += d.attempt_count;
  if (d.attempts.length !== d.attempt_count) return fail(`${where}: attempt_count ${d.attempt_count} but ${d.attempts.length} attempts listed`);
  d.attempts.forEach((x, i) => x.attempt !== i + 1 && fail(`${where}: attempt #${i + 1} is numbered ${x.attempt}`));

  // Same webhook-id (the log's key), body and target on every request, each signed with the hook's secret.
  const wh = new Webhook(hook.secret);
  for (const a of arrivals) {
    if (a.path !== hook.path) fail(`${where}: request ${a.index + 1} arrived at ${a.path}`);
    if (a.body !== arrivals[0].body) fail(`${where}: request ${a.index + 1} has another body than the first`);
    const sent = JSON.parse(a.body) as { data: { event_id: string; webhook_id: string } };
    if (sent.data.event_id !== d.event_id || sent.data.webhook_id !== hook.id) fail(`${where}: request ${a.index + 1} carries another delivery's event or webhook`);
    try {
      wh.verify(a.body, {
        'webhook-id': String(a.headers['webhook-id']),
        'webhook-timestamp': String(a.headers['webhook-timestamp']),
        'webhook-signature': String(a.headers['webhook-signature']),
      });
    } catch (err) {
      fail(`${where}: request ${a.index + 1} does not verify: ${(err as Error).message}`);
    }
  }

  // Each request belongs to the recorded attempt that started last before it arrived (attempts
  // of one delivery never overlap: each waits for the previous one's outcome).
  const pairs: Pair[] = d.attempts.map((rec) => {
    const start = Date.parse(rec.started_at);
    return { rec, start, end: start + rec.duration_ms, answered: false };
  });
  for (const a of arrivals) {
    const i = pairs.findLastIndex((p) => p.start <= a.at + 1);
    if (i < 0) fail(`${where}: request ${a.index + 1} arrived before any recorded attempt started — ${story()}`);
    else if (pairs[i].arrival) fail(`${where}: attempt ${i + 1} reached the receiver twice — ${story()}`);
    else pairs[i].arrival = a;
  }

  // What the sender recorded is what the receiver did.
  pairs.forEach((p, i) => {
    const a = p.arrival;
    if (!a) {
      // Never reached the receiver: only a timeout that really ran out its deadline explains that.
      if (same(p.rec, TIMED_OUT) && p.rec.duration_ms >= TIMEOUT_MS - 1) tally.unreached++;
      else fail(`${where}: attempt ${i + 1} recorded ${show(p.rec)} but never reached the receiver — ${story()}`);
      return;
    }
    const want = expectedAttempt(a);
    if (same(p.rec, want)) {
      p.answered = true;
      return;
    }
    const answeredAt = a.answeredAt ?? Infinity;
    if (same(p.rec, TIMED_OUT) && answeredAt >= p.start + TIMEOUT_MS - DEADLINE_MARGIN_MS) {
      tally.lateAnswers++;
      return;
    }
    const took = a.answeredAt !== undefined ? `, answered ${a.answeredAt - p.start} ms after the attempt started` : '';
    fail(`${where}: attempt ${i + 1} recorded ${show(p.rec)}, the receiver did ${a.answer.kind}${took}: expected ${show(want)} — ${story()}`);
  });

  // The policy, over the verified outcomes: the first 2xx or permanent answer is the last
  // attempt; with only transient ones, exactly the schedule's length + 1 attempts, then failed.
  const recs = d.attempts;
  const last = recs[recs.length - 1];
  const firstFinal = recs.findIndex((r) => r.outcome !== 'transient');
  if (recs.length === 0) {
    fail(`${where}: final (${d.state}) without any attempt`);
  } else if (firstFinal >= 0) {
    const wantState = last.outcome === 'delivered' ? 'delivered' : 'failed';
    if (firstFinal !== recs.length - 1) fail(`${where}: sent again after a final answer (${show(recs[firstFinal])}) — ${story()}`);
    else if (d.state !== wantState) fail(`${where}: state ${d.state}, expected ${wantState} — ${story()}`);
    else if (wantState === 'delivered') tally.delivered++;
    else tally.failedPermanent++;
  } else if (recs.length !== MAX_ATTEMPTS || d.state !== 'failed') {
    fail(`${where}: only transient outcomes, expected ${MAX_ATTEMPTS} attempts then failed — ${story()}`);
  } else {
    tally.failedExhausted++;
  }
  if (last) {
    if (d.last_error !== last.error_class) fail(`${where}: last_error ${d.last_error}, last attempt ${last.error_class}`);
    if (d.last_response_code !== last.status_code) fail(`${where}: last_response_code ${d.last_response_code}, last attempt ${last.status_code}`);
  }
  if ((d.delivered_at !== null) !== (d.state === 'delivered')) fail(`${where}: delivered_at ${d.delivered_at} with state ${d.state}`);
  if (d.next_attempt_at !== null) fail(`${where}: a final delivery still has next_attempt_at ${d.next_attempt_at}`);

  // Gaps: at least the jittered schedule's lower bound, and at least a 429/503's Retry-After,
  // by the receiver's clock (from the previous answer) and by the sender's records.
  for (let i = 1; i < pairs.length; i++) {
    const prev = pairs[i - 1];
    const cur = pairs[i];
    const minDelay = SCHEDULE_S[i - 1] * 1000 * (1 - JITTER);
    const recGap = cur.start - prev.end;
    if (recGap < minDelay - 2) fail(`${where}: recorded attempt ${i + 1} started ${recGap} ms after attempt ${i} ended; the schedule says ≥ ${minDelay} ms`);
    const pa = prev.arrival;
    if (!pa || !prev.answered) continue;
    const notBefore = pa.notBefore;
    if (notBefore !== undefined && cur.start < notBefore) {
      fail(`${where}: recorded attempt ${i + 1} started ${notBefore - cur.start} ms before attempt ${i}'s Retry-After (${pa.answer.retryAfter}) allowed`);
    }
    if (!cur.arrival) continue;
    const gap = cur.arrival.at - (pa.answeredAt ?? pa.at);
    if (gap < minDelay - 1) fail(`${where}: request ${i + 1} came ${gap} ms after attempt ${i} was answered (${pa.answer.kind}); the schedule says ≥ ${minDelay} ms`);
    if (notBefore !== undefined && cur.arrival.at < notBefore) {
      fail(`${where}: request ${i + 1} came ${notBefore - cur.arrival.at} ms before attempt ${i}'s Retry-After (${pa.answer.retryAfter}) allowed`);
    }
    if (pa.answer.kind === 'http500_retry_after') tally.ignoredRetryAfterGaps.push(gap);
  }
}

describe.each(testDatabases())('receiver chaos on %s', (dbName, makeDb) => {
  let cert: TestCert;
  let rx: ChaosReceiver;
  let t: TestApp;
  let worker: ServeProcess | undefined;

  beforeAll(async () => {
    process.stdout.write(`receiver chaos [${dbName}]: seed ${SEED} (CHAOS_SEED=${SEED} replays the same answers)\n`);
    cert = makeEcCert();
    rx = await ChaosReceiver.start(cert, ({ path, index, body }) => {
      const eventId = (JSON.parse(body) as { data?: { event_id?: string } }).data?.event_id ?? '';
      const key = `${SEED}:${path}:${eventId}:${index}`;
      return { kind: pickWeighted(PROFILES[temperamentOf(path)], hash01(`${key}:kind`)), detail: hash01(`${key}:detail`) };
    });
    // This process serves the API and emits; the sender is a real worker process
    // (`trendhooks serve --role worker`), so the receiver does not share its event loop.
    t = await startTestApp(makeDb(), { role: 'api', env: { SSRF_ALLOW_CIDRS: '127.0.0.1/32', PLAN_RATE_LIMITS: 'business=1000000' } });
  });
  afterAll(async () => {
    if (worker) await stopProcess(worker);
    await t?.close();
    await rx?.close();
    if (cert) fs.rmSync(cert.dir, { recursive: true, force: true });
  });

  it('ends every delivery delivered or failed exactly as the retry policy says, per the receiver’s own log', async () => {
    const started = Date.now();
    worker = spawnServe(t, cert, {
      DELIVERY_RETRY_SCHEDULE: SCHEDULE_S.join(','),
      DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS),
      DELIVERY_POLL_INTERVAL_MS: '50',
      DELIVERY_CONCURRENCY: '64',
      DELIVERY_LEASE_MS: '60000',
      // The circuit breaker off: this receiver's hooks share one host and port and fail without an
      // answer often enough to open it, whose pauses (30 s, and half-open waits of timeout + lease)
      // would outlast the compressed schedule this suite checks against. The breaker has its own
      // suite (test/circuit-breaker.e2e-spec.ts).
      DELIVERY_CIRCUIT_FAILURES: '0',
    });
    const w = worker;
    const workerOutput = () => w.output.join('').slice(-3000);
    await pollUntil(async () => w.output.join(''), (out) => out.includes('running') || w.exitCode !== null, 30_000);
    if (!w.output.join('').includes('running')) throw new Error(`the worker did not start:\n${workerOutput()}`);

    // Two customers, eight hooks on one subreddit: four per event type, one of each temperament.
    const customers = [await t.customer('business'), await t.customer('business')];
    const hooks: Hook[] = [];
    for (let i = 0; i < EVENT_TYPES.length * HOOKS_PER_TYPE; i++) {
      const c = customers[i % customers.length];
      const res = await t
        .http()
        .post('/v1/webhooks')
        .set(c.auth)
        .send({ url: rx.url(hookPath(i)), event: EVENT_TYPES[Math.floor(i / HOOKS_PER_TYPE)], subreddit: SUBREDDIT, allow_nonstandard_port: true });
      expect(res.status).toBe(201);
      hooks.push({ id: res.body.data.id, secret: res.body.data.secret, path: hookPath(i), auth: c.auth });
    }

    // Events arrive over about half a second, interleaved with the first attempts and retries.
    const events = t.app.get(EventsService);
    let queued = 0;
    for (let e = 0; e < EVENTS_PER_TYPE; e++) {
      for (const type of EVENT_TYPES) {
        const res = await events.emit({ id: `evt_chaos_${type.split('.')[1]}_${e}`, type, subreddit: SUBREDDIT, data: { n: e } });
        queued += res.deliveries;
      }
      if (e % 4 === 3) await sleep(30);
    }
    const deliveriesTotal = EVENT_TYPES.length * HOOKS_PER_TYPE * EVENTS_PER_TYPE;
    expect(queued).toBe(deliveriesTotal);

    // Until every delivery is final, then a quiet period in which nothing may arrive any more
    // (a final delivery is never sent again).
    const ds = t.app.get(DataSource);
    const deadline = Date.now() + 75_000;
    for (;;) {
      const rows: { state: string; n: number | string }[] = await ds.query('SELECT state, COUNT(*) AS n FROM deliveries GROUP BY state');
      if (rows.every((r) => r.state === 'delivered' || r.state === 'failed')) break;
      if (w.exitCode !== null) throw new Error(`seed ${SEED}: the worker exited (${w.exitCode}):\n${workerOutput()}`);
      if (Date.now() > deadline) throw new Error(`seed ${SEED}: deliveries still not final after 75 s: ${JSON.stringify(rows)}\nworker output:\n${workerOutput()}`);
      await sleep(200);
    }
    const settledAt = Date.now();
    await sleep(1500);
    const lateArrivals = rx.arrivals.filter((a) => a.at > settledAt);

    const problems: string[] = [];
    const fail = (msg: string) => void problems.push(msg);
    const tally: Tally = { delivered: 0, failedPermanent: 0, failedExhausted: 0, attempts: 0, unreached: 0, lateAnswers: 0, ignoredRetryAfterGaps: [] };
    const listed = new Set<string>();

    for (const hook of hooks) {
      const list = await t.http().get(`/v1/webhooks/${hook.id}/deliveries?limit=100`).set(hook.auth);
      expect(list.status).toBe(200);
      expect(list.body.meta.page.next_cursor).toBeNull();
      const deliveries = list.body.data as ApiDelivery[];
      expect(deliveries).toHaveLength(EVENTS_PER_TYPE);
      for (const d of deliveries) {
        listed.add(d.id);
        checkDelivery(d, rx.byMsgId.get(d.id) ?? [], hook, tally, fail);
      }

      // The webhook's last_* describe its latest attempt (the latest to start; a tie on the
      // millisecond may be any of them), which is the final attempt of its delivery.
      const got = (await t.http().get(`/v1/webhooks/${hook.id}`).set(hook.auth)).body.data as { last_status: string | null; last_response_code: number | null; last_delivery_at: string | null };
      const all = deliveries.flatMap((d) => d.attempts.map((a) => ({ d, a })));
      const latestMs = Math.max(...all.map(({ a }) => Date.parse(a.started_at)));
      const candidates = all.filter(({ a }) => Date.parse(a.started_at) === latestMs);
      const match = candidates.some(({ d, a }) => a.attempt === d.attempt_count && d.state === got.last_status && a.status_code === got.last_response_code);
      if (got.last_delivery_at !== new Date(latestMs).toISOString() || !match) {
        fail(
          `seed ${SEED}, ${hook.path}: webhook says ${JSON.stringify({ last_delivery_at: got.last_delivery_at, last_status: got.last_status, last_response_code: got.last_response_code })}, ` +
            `its latest attempt(s) at ${new Date(latestMs).toISOString()}: ` +
            JSON.stringify(candidates.map(({ d, a }) => ({ delivery: d.id, state: d.state, attempt: a.attempt, status_code: a.status_code }))),
        );
      }
    }

    const unlisted = [...rx.byMsgId.keys()].filter((id) => !listed.has(id));
    const kindCounts = Object.fromEntries(CHAOS_KINDS.map((k) => [k, rx.arrivals.filter((a) => a.answer.kind === k).length])) as Record<ChaosKind, number>;
    const hangsNotAbandoned = rx.arrivals.filter((a) => a.answer.kind === 'hang' && a.abandonedAt === undefined).length;
    const { delivered, failedPermanent, failedExhausted, attempts } = tally;
    process.stdout.write(
      `receiver chaos [${dbName}] seed ${SEED}: ${deliveriesTotal} deliveries, ${delivered} delivered, ${failedPermanent + failedExhausted} failed ` +
        `(${failedPermanent} permanent, ${failedExhausted} exhausted), ${attempts} attempts, ${rx.arrivals.length} arrivals ` +
        `(${tally.unreached} timed out unreached, ${tally.lateAnswers} answered past the deadline; ${rx.tls.connections} TLS connections, ${rx.tls.abandonedHandshakes} abandoned mid-handshake); ` +
        `${CHAOS_KINDS.map((k) => `${k}=${kindCounts[k]}`).join(' ')}; ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );

    expect({ count: problems.length, problems: problems.slice(0, 25) }).toEqual({ count: 0, problems: [] });
    expect(unlisted).toEqual([]);
    expect(rx.strays).toEqual([]); // every request had a webhook-id; no redirect was ever followed
    expect(lateArrivals.map((a) => `${a.msgId} #${a.index + 1}`)).toEqual([]);
    expect(hangsNotAbandoned).toBe(0); // the sender gave up on every hung request and closed its connection
    expect(delivered + failedPermanent + failedExhausted).toBe(deliveriesTotal);
    expect(attempts).toBe(rx.arrivals.length + tally.unreached);
    // Requests lost to the sender's own deadline are the environment's doing, and must stay rare
    // (a sender that timed out for no reason would show here).
    expect(tally.unreached + tally.lateAnswers).toBeLessThanOrEqual(Math.ceil(attempts * 0.05));

    // The run really exercised the policy: every kind of answer, every way of ending.
    expect(CHAOS_KINDS.filter((k) => kindCounts[k] < MIN_PER_KIND).map((k) => `${k}=${kindCounts[k]}`)).toEqual([]);
    expect(delivered).toBeGreaterThanOrEqual(MIN_PER_KIND);
    expect(failedPermanent).toBeGreaterThanOrEqual(MIN_PER_KIND);
    expect(failedExhausted).toBeGreaterThanOrEqual(MIN_PER_KIND);
    // A Retry-After on a 500 does not count (only 429 and 503 do): some retry came sooner than it asked.
    expect(tally.ignoredRetryAfterGaps.length).toBeGreaterThanOrEqual(MIN_PER_KIND);
    expect(Math.min(...tally.ignoredRetryAfterGaps)).toBeLessThan(1000);
  }, 150_000);
});
