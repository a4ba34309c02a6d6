import { INestApplication, OnApplicationShutdown } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import request from 'supertest';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { ApiKeyService, DeliveryTransport, EventsService, signDelivery, type SendOutcome, type TransportRequest } from '../src/index';
import { testDatabases, TestDatabase } from './support/databases';
import { TEST_DNS } from './support/app';
import { HostAppModule, HostClock } from './host-app/host.module';

const MSG_ID = /^msg_[0-9a-hjkmnp-tv-z]{26}$/;

/** One attempt as the fake queue received it. */
interface Produced {
  deliveryId: string;
  attempt: number;
  webhookId: string;
  url: string;
  body: string;
  headers: Record<string, string>;
}

type Answer = 'delivered' | 'transient' | 'permanent';

/**
 * A host's own transport that is not HTTP: an in-process queue producer. It hands each signed
 * delivery to "the queue" (records it) and answers as the test tells it, per subreddit.
 */
class InProcessQueueTransport extends DeliveryTransport implements OnApplicationShutdown {
  readonly produced: Produced[] = [];
  /** Answers still to give per webhook, in order; `delivered` once they run out. */
  readonly script = new Map<string, Answer[]>();
  shutdowns = 0;

  async send(req: TransportRequest): Promise<SendOutcome> {
    const t0 = performance.now();
    if (!(await req.confirm())) return { kind: 'cancelled' };
    const { body, headers } = signDelivery(req, new Date());
    const { webhookId, url } = req.destination;
    this.produced.push({ deliveryId: req.deliveryId, attempt: req.attempt, webhookId, url, body, headers });
    const answer = this.script.get(webhookId)?.shift() ?? 'delivered';
    const durationMs = performance.now() - t0;
    if (answer === 'delivered') return { kind: 'delivered', statusCode: 202, excerpt: 'queued', durationMs };
    return {
      kind: answer,
      stage: 'during',
      errorClass: answer === 'transient' ? 'queue_unavailable' : 'queue_rejected',
      statusCode: null,
      excerpt: answer === 'transient' ? 'the broker did not answer' : 'the broker refused the message',
      retryAfterMs: null,
      durationMs,
    };
  }

  onApplicationShutdown(): void {
    this.shutdowns++;
  }
}

describe.each(testDatabases())("delivery through a host's own non-HTTP transport on %s", (_name, makeDb) => {
  let db: TestDatabase;
  let app: INestApplication | undefined;
  let transport: InProcessQueueTransport;
  let n = 0;
  const http = () => request(app!.getHttpServer());

  beforeAll(async () => {
    transport = new InProcessQueueTransport();
    db = makeDb();
    const database = await db.create();
    app = await NestFactory.create(
      HostAppModule.forRoot(database, {
        cursorSecret: 'host-transport-cursor-secret-0123456789abcdef',
        businessRequestsPerMinute: 1000,
        dns: TEST_DNS,
        denyCidrs: '',
        clock: new HostClock(),
        deliveryWorker: true,
        // 1 s (±20 %) between attempts: long enough to see a delivery waiting for its retry.
        delivery: { transport, pollIntervalMs: 50, retryScheduleSeconds: [1, 1], leaseMs: 6000 },
      }),
      { bodyParser: false, logger: false, abortOnError: false },
    );
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  /** A fresh customer with one webhook created through the HTTP API, on a subreddit of its own. */
  async function subscribe() {
    const issued = await app!.get(ApiKeyService).issue(`host-transport-${process.pid}-${n++}`, 'business');
    const auth = { Authorization: `Bearer ${issued.key}` };
    const subreddit = `sub${Math.random().toString(36).slice(2, 12)}`;
    const res = await http().post('/v1/webhooks').set(auth).send({ url: 'https://hooks.example.com/queue', event: 'trends.surge', subreddit });
    expect(res.status).toBe(201);
    return { auth, subreddit, w: res.body.data as { id: string; secret: string } };
  }

  const emit = (subreddit: string) => app!.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { count: 42, baseline: 7.5 } });

  async function deliveries(auth: Record<string, string>, webhookId: string): Promise<any[]> {
    const res = await http().get(`/v1/webhooks/${webhookId}/deliveries`).set(auth);
    expect(res.status).toBe(200);
    return res.body.data as any[];
  }

  async function until<T>(what: string, fn: () => Promise<T>, pred: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await fn();
      if (pred(v)) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  const producedFor = (webhookId: string) => transport.produced.filter((p) => p.webhookId === webhookId);
  const verify = (secret: string, p: Produced) =>
    new StandardWebhook(secret).verify(p.body, { 'webhook-id': p.headers['webhook-id'], 'webhook-timestamp': p.headers['webhook-timestamp'], 'webhook-signature': p.headers['webhook-signature'] });

  it('delivers an emitted event through the transport, signed per Standard Webhooks, and records it delivered', async () => {
    const { auth, subreddit, w } = await subscribe();
    const emitted = await emit(subreddit);
    expect(emitted.deliveries).toBe(1);
    const [d] = await until('the delivery to end', () => deliveries(auth, w.id), (ds) => ds[0]?.state === 'delivered');
    expect(d).toMatchObject({ webhook_id: w.id, event_id: emitted.event_id, state: 'delivered', attempt_count: 1, last_error: null, last_response_code: 202 });
    expect(d.attempts).toEqual([expect.objectContaining({ attempt: 1, outcome: 'delivered', status_code: 202, error_class: null })]);

    const [p] = producedFor(w.id);
    expect(producedFor(w.id)).toHaveLength(1);
    // The URL as stored with the webhook; nothing connected to it (it is a public address of the test DNS).
    expect(p).toMatchObject({ deliveryId: d.id, attempt: 1, url: 'https://hooks.example.com/queue' });
    expect(p.headers['webhook-id']).toMatch(MSG_ID);
    expect(p.headers['webhook-id']).toBe(d.id);
    expect(p.headers['content-type']).toBe('application/json');
    const payload = verify(w.secret, p) as { type: string; data: Record<string, unknown> };
    expect(payload.type).toBe('trends.surge');
    expect(payload.data).toMatchObject({ event_id: emitted.event_id, webhook_id: w.id, subreddit, count: 42 });
    // Signed with this webhook's secret, not any other.
    const other = await subscribe();
    expect(() => verify(other.w.secret, p)).toThrow();
  });

  it('retries a transient failure on the schedule, the delivery pending in between, with the same id and a fresh signature', async () => {
    const { auth, subreddit, w } = await subscribe();
    transport.script.set(w.id, ['transient']);
    await emit(subreddit);
    // Read on the delivery's own state: its attempts are listed by a second query of the same request.
    const [waiting] = await until('the failed first attempt', () => deliveries(auth, w.id), (ds) => ds[0]?.last_error !== undefined && ds[0].last_error !== null);
    expect(waiting).toMatchObject({ state: 'pending', attempt_count: 1, last_error: 'queue_unavailable', last_response_code: null });
    expect(waiting.next_attempt_at).not.toBeNull();
    expect(waiting.attempts[0]).toMatchObject({ attempt: 1, outcome: 'transient', error_class: 'queue_unavailable', status_code: null, response_excerpt: 'the broker did not answer' });

    const [d] = await until('the retry', () => deliveries(auth, w.id), (ds) => ds[0]?.state === 'delivered');
    expect(d).toMatchObject({ state: 'delivered', attempt_count: 2, last_error: null });
    expect(d.attempts.map((a: { attempt: number; outcome: string }) => [a.attempt, a.outcome])).toEqual([
      [1, 'transient'],
      [2, 'delivered'],
    ]);
    const produced = producedFor(w.id);
    expect(produced.map((p) => p.attempt)).toEqual([1, 2]);
    expect(new Set(produced.map((p) => p.headers['webhook-id']))).toEqual(new Set([d.id]));
    for (const p of produced) verify(w.secret, p);
  });

  it('fails a delivery the transport refuses permanently, without retrying it', async () => {
    const { auth, subreddit, w } = await subscribe();
    transport.script.set(w.id, ['permanent']);
    await emit(subreddit);
    const [d] = await until('the delivery to fail', () => deliveries(auth, w.id), (ds) => ds[0]?.state === 'failed');
    expect(d).toMatchObject({ state: 'failed', attempt_count: 1, last_error: 'queue_rejected', next_attempt_at: null });
    await new Promise((r) => setTimeout(r, 300));
    expect(producedFor(w.id)).toHaveLength(1);
    const webhook = await http().get(`/v1/webhooks/${w.id}`).set(auth);
    expect(webhook.body.data.last_status).toBe('failed');
  });

  it("calls the transport's shutdown hook once when the app closes", async () => {
    expect(transport.shutdowns).toBe(0);
    await app!.close();
    app = undefined;
    expect(transport.shutdowns).toBe(1);
  });
});
