import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret } from '../src/delivery/secret';
import { generateDemoDataset } from '../src/demo/dataset';
import { EVENT_CATALOGUE, EVENT_KINDS, exampleFigures } from '../src/events/catalogue';
import { toPostEntity } from '../src/posts/ingest.service';
import { PostStore } from '../src/posts/post.store';
import { TrendsPipeline } from '../src/trends/trends.pipeline';
import { startTestApp, TestApp } from './support/app';
import { testDatabases } from './support/databases';
import { OpenApiContract } from './support/openapi';
import { databaseUrl, runCli } from './support/processes';
import { makeCert, Receiver, TestCert } from './support/receiver';

/**
 * A receiver that validates what it gets against openapi.json must accept every body trendhooks
 * delivers. The bodies here are the ones a real HTTPS receiver got, signed, from the real worker:
 * each kind as the trend pipeline detects it, `events emit --example` of each kind (the
 * walk-through's command among them), and test events of each kind; each is checked against the schema that
 * openapi.json's `webhooks` section gives its `type` (objects closed: no undocumented field).
 */
describe.each(testDatabases())('every delivered body matches openapi.json on %s', (_name, makeDb) => {
  let t: TestApp;
  let cert: TestCert;
  let rx: Receiver;
  const contract = new OpenApiContract();
  const secrets = new Map<string, string>();

  beforeAll(async () => {
    cert = makeCert();
    rx = await Receiver.start(cert);
    // Receivers under /gone/ answer 410 Gone: the webhook is disabled and the operators hear of it, signed.
    rx.behaviour = (r) => ({ status: r.path.startsWith('/gone/') ? 410 : 200 });
    const opsSecret = generateWebhookSecret();
    secrets.set('/ops/webhook.disabled', opsSecret);
    t = await startTestApp(makeDb(), {
      env: {
        SSRF_ALLOW_CIDRS: '127.0.0.1/32',
        DELIVERY_CA_FILE: cert.caFile,
        DELIVERY_POLL_INTERVAL_MS: '50',
        OPERATIONS_WEBHOOK_URL: rx.url('/ops/webhook.disabled'),
        OPERATIONS_WEBHOOK_SECRET: opsSecret,
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  /** A webhook delivering to `/<group>/<kind>` on the receiver, its secret kept to verify what arrives. */
  async function subscribe(auth: Record<string, string>, group: string, kind: string, subreddit: string): Promise<string> {
    const res = await t.http().post('/v1/webhooks').set(auth).send({ url: rx.namedUrl(`/${group}/${kind}`), event: kind, subreddit, allow_nonstandard_port: true });
    expect(res.status).toBe(201);
    secrets.set(`/${group}/${kind}`, res.body.data.secret);
    return res.body.data.id;
  }

  /** What arrived for `group`, each verified as signed by its webhook and checked against openapi.json. */
  function checkedBodies(group: string): { path: string; body: { type: string; data: Record<string, unknown> } }[] {
    return rx.received
      .filter((r) => r.path.startsWith(`/${group}/`))
      .map((r) => {
        const body = new Webhook(secrets.get(r.path)!).verify(r.body, r.headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
        contract.checkDelivery(body);
        return { path: r.path, body };
      });
  }

  it('the trend pipeline: a surge, a keyword spike and a rising post, each as detected and delivered', async () => {
    const c = await t.customer();
    const subreddit = `bodies${Math.random().toString(36).slice(2, 9)}`;
    for (const kind of EVENT_KINDS) await subscribe(c.auth, 'pipeline', kind, subreddit);
    // The demo's generated subreddit, replayed poll by poll through the real pipeline as `trendhooks demo` does.
    const dataset = generateDemoDataset({ subreddit, idPrefix: 'bd' });
    const posts = t.app.get(PostStore);
    const pipeline = t.app.get(TrendsPipeline);
    await pipeline.tick(subreddit, new Date(dataset.startMs));
    for (const round of dataset.rounds) {
      const entities = round.posts.map((p) => toPostEntity(p, new Date(round.atMs), new Date(p.firstSeenAtMs)));
      const { insertedIds } = await posts.upsertMany(entities);
      await pipeline.onPostsUpserted(entities, { insertedIds });
    }
    await rx.waitUntil((r) => EVENT_KINDS.every((kind) => r.some((x) => x.path === `/pipeline/${kind}`)), 30_000, 'a delivery of every kind');

    const bodies = checkedBodies('pipeline');
    expect(new Set(bodies.map((b) => b.body.type))).toEqual(new Set(EVENT_KINDS));
    for (const { path, body } of bodies) expect({ path, type: body.type, subreddit: body.data.subreddit }).toEqual({ path: `/pipeline/${body.type}`, type: body.type, subreddit });
  }, 180_000);

  it("events emit --example of every kind, the walk-through's command first", async () => {
    const c = await t.customer();
    // The walk-through's subreddit; this suite's database is its own.
    for (const kind of EVENT_KINDS) await subscribe(c.auth, 'example', kind, 'typescript');
    const env = { DATABASE_URL: databaseUrl(t.config.database), CURSOR_SECRET: t.config.cursor.secrets[0] };
    const walkThrough = await runCli(['events', 'emit', '--event', 'trends.surge', '--subreddit', 'typescript', '--example'], env);
    expect(walkThrough).toEqual({ code: 0, stdout: expect.stringMatching(/^event evt_\w+: 1 delivery queued\n$/), stderr: '' });
    for (const kind of EVENT_KINDS.filter((k) => k !== 'trends.surge')) {
      const run = await runCli(['events', 'emit', '--event', kind, '--subreddit', 'typescript', '--example'], env);
      expect({ kind, ...run }).toEqual({ kind, code: 0, stdout: expect.stringMatching(/: 1 delivery queued\n$/), stderr: '' });
    }
    // --data over --example: still a body of the kind's schema.
    const changed = await runCli(['events', 'emit', '--event', 'trends.velocity', '--subreddit', 'typescript', '--example', '--data', '{"count": 42}'], env);
    expect(changed.code).toBe(0);
    await rx.waitUntil((r) => r.filter((x) => x.path.startsWith('/example/')).length >= EVENT_KINDS.length + 1, 30_000, 'the emitted examples');

    const bodies = checkedBodies('example');
    expect(bodies.map((b) => b.body.type).sort()).toEqual([...EVENT_KINDS, 'trends.velocity'].sort());
    for (const { body } of bodies) {
      const { event_id, webhook_id: _w, subreddit, ...figures } = body.data;
      const example = EVENT_CATALOGUE[body.type as (typeof EVENT_KINDS)[number]].example;
      const { event_id: exampleId, webhook_id: _ew, subreddit: _es, ...exampleFigures } = example.data;
      expect(subreddit).toBe('typescript');
      // The example's figures, under a fresh event id and the time of the emit.
      expect(figures).toEqual(figures.count === 42 && body.type === 'trends.velocity' ? { ...exampleFigures, count: 42 } : exampleFigures);
      expect(event_id).not.toBe(exampleId);
      expect(Date.now() - Date.parse((body as unknown as { timestamp: string }).timestamp)).toBeLessThan(120_000);
    }
  }, 120_000);

  it("test events: the webhook's own kind and subreddit, the kind's example figures, marked test: true", async () => {
    const c = await t.customer();
    const sent = new Map<string, { kind: string; event_id: string; delivery_id: string }>();
    for (const kind of EVENT_KINDS) {
      const id = await subscribe(c.auth, 'test', kind, 'TestEvents');
      const res = await t.http().post(`/v1/webhooks/${id}/test`).set(c.auth);
      expect(res.status).toBe(202);
      sent.set(id, { kind, ...res.body.data });
    }
    await rx.waitUntil((r) => r.filter((x) => x.path.startsWith('/test/')).length >= EVENT_KINDS.length, 30_000, 'the test events');

    const bodies = checkedBodies('test');
    expect(bodies.map((b) => b.body.type).sort()).toEqual([...EVENT_KINDS].sort());
    for (const { path, body } of bodies) {
      const { event_id, webhook_id, subreddit, test, ...figures } = body.data;
      const asked = sent.get(webhook_id as string)!;
      expect({ path, type: body.type, event_id, subreddit, test }).toEqual({ path: `/test/${asked.kind}`, type: asked.kind, event_id: asked.event_id, subreddit: 'testevents', test: true });
      expect(event_id).toMatch(/^evt_test_/);
      expect(figures).toEqual(exampleFigures(asked.kind as (typeof EVENT_KINDS)[number]));
      expect(rx.received.find((r) => r.path === path)!.headers['webhook-id']).toBe(asked.delivery_id);
    }
  });

  it("the operators' webhook.disabled, when a receiver answers 410 Gone", async () => {
    const c = await t.customer();
    const id = await subscribe(c.auth, 'gone', 'trends.surge', 'goneaway');
    expect((await t.http().post(`/v1/webhooks/${id}/test`).set(c.auth)).status).toBe(202);
    await rx.waitUntil((r) => r.some((x) => x.path.startsWith('/ops/')), 30_000, 'the operators\' notification');
    const [notice] = checkedBodies('ops');
    expect(notice.body).toMatchObject({ type: 'webhook.disabled', data: { id, customer_id: c.customerId, reason: 'gone' } });
  });

  it('covered every body openapi.json documents, and the check refuses an undocumented field', () => {
    expect([...contract.deliveriesCovered].sort()).toEqual(Object.keys(contract.doc.webhooks).sort());
    const [one] = checkedBodies('test');
    expect(() => contract.checkDelivery({ ...one.body, data: { ...one.body.data, extra: 1 } })).toThrow(/must NOT have additional properties/);
    expect(() => contract.checkDelivery({ ...one.body, data: { ...one.body.data, test: false } })).toThrow(/must be equal to constant/);
    const { observed: _o, ...missing } = one.body.data;
    expect(() => contract.checkDelivery({ ...one.body, data: missing })).toThrow(/must have required property 'observed'/);
  });
});
