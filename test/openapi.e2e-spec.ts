import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { generateOpenApiDocument } from '../src/cli/openapi';
import type { HttpAdapterName } from '../src/config/config';
import { serialiseOpenApiDocument } from '../src/openapi/document';
import { EventsService } from '../src/delivery/events.service';
import { IngestService } from '../src/posts/ingest.service';
import { testTargets } from './support/databases';
import { startTestApp, TestApp } from './support/app';
import { Answer, OPENAPI_FILE, OpenApiContract } from './support/openapi';
import { makeCert, Receiver, sleep, TestCert } from './support/receiver';

describe('openapi.json', () => {
  it('is what the code generates (npm run openapi writes it)', async () => {
    const fresh = serialiseOpenApiDocument(await generateOpenApiDocument());
    expect(fresh).toBe(fs.readFileSync(OPENAPI_FILE, 'utf8'));
  });

  it('is OpenAPI 3.1 with the bearer scheme and the shared response headers', () => {
    const { doc } = new OpenApiContract();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(Object.keys(doc.components.headers).sort()).toEqual(
      ['RateLimit', 'RateLimit-Policy', 'Retry-After', 'WWW-Authenticate', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Request-Id'].sort(),
    );
    // 3.0 leftovers that 3.1 validators read differently.
    expect(JSON.stringify(doc)).not.toContain('"nullable"');
  });
});

const ULID = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
const MSG = 'msg_0123456789abcdefghjkmnpqrs';

/** Real answers of every route, on SQLite, checked against the committed document. */
describe.each(testTargets(['express', 'fastify']).filter(([name]) => name.startsWith('sqlite')))('answers match openapi.json on %s', (_name, makeDb, adapter) => {
  const contract = new OpenApiContract();
  let t: TestApp;
  let cert: TestCert;
  let rx: Receiver;
  let dir: string;

  beforeAll(async () => {
    cert = makeCert();
    rx = await Receiver.start(cert);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-openapi-'));
    t = await startTestApp(makeDb(), {
      adapter: adapter as HttpAdapterName,
      // Deliveries go to the local receiver only.
      env: { SSRF_ALLOW_CIDRS: '127.0.0.1/32', DELIVERY_CA_FILE: cert.caFile, DELIVERY_POLL_INTERVAL_MS: '50', DELIVERY_TIMEOUT_MS: '2000', DELIVERY_LEASE_MS: '8000' },
    });
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(cert.dir, { recursive: true, force: true });
  });

  /** Sends, checks the answer against the document, and returns it. */
  async function call(
    method: 'get' | 'post' | 'patch' | 'delete',
    template: string,
    opts: { params?: Record<string, string>; auth?: Record<string, string>; query?: Record<string, string>; body?: unknown; raw?: [string, string] } = {},
  ): Promise<Answer & { body: any }> {
    const url = template.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(opts.params?.[k] ?? ''));
    let req = t.http()[method](url);
    if (opts.auth) req = req.set(opts.auth);
    if (opts.query) req = req.query(opts.query);
    if (opts.raw) req = req.set('Content-Type', opts.raw[0]).send(opts.raw[1]);
    else if (opts.body !== undefined) req = req.send(opts.body as object);
    const res = await req;
    const answer = { status: res.status, body: res.body, text: res.text, headers: res.headers };
    contract.check(method, template, answer);
    return answer;
  }

  it('webhook routes: success and error answers', async () => {
    const c = await t.customer('business');
    const free = await t.customer('free');
    const hook = { url: 'https://hooks.example.com/x', event: 'trends.surge', subreddit: 'typescript' };

    const created = await call('post', '/v1/webhooks', { auth: c.auth, body: hook });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    expect((await call('post', '/v1/webhooks', { auth: c.auth, body: { url: hook.url } })).status).toBe(400);
    expect((await call('post', '/v1/webhooks', { auth: c.auth, raw: ['application/json', '{"url":'] })).body.error.code).toBe('INVALID_JSON');
    expect((await call('post', '/v1/webhooks', { auth: c.auth, raw: ['text/plain', 'x'] })).status).toBe(415);
    expect((await call('post', '/v1/webhooks', { auth: c.auth, body: { ...hook, pad: 'x'.repeat(70 * 1024) } })).status).toBe(413);
    expect((await call('post', '/v1/webhooks', { auth: c.auth, body: { ...hook, url: 'https://10.0.0.1/' } })).status).toBe(422);
    expect((await call('post', '/v1/webhooks', { body: hook })).status).toBe(401);
    expect((await call('post', '/v1/webhooks', { auth: free.auth, body: hook })).status).toBe(403);

    expect((await call('get', '/v1/webhooks', { auth: c.auth, query: { limit: '1' } })).body.meta.page.limit).toBe(1);
    expect((await call('get', '/v1/webhooks', { auth: c.auth, query: { limit: '0' } })).status).toBe(400);
    expect((await call('get', '/v1/webhooks', { auth: free.auth })).status).toBe(403);
    expect((await call('get', '/v1/webhooks', {})).status).toBe(401);

    expect((await call('get', '/v1/webhooks/{webhook_id}', { auth: c.auth, params: { webhook_id: id } })).status).toBe(200);
    expect((await call('get', '/v1/webhooks/{webhook_id}', { auth: c.auth, params: { webhook_id: 'nope' } })).status).toBe(400);
    expect((await call('get', '/v1/webhooks/{webhook_id}', { auth: c.auth, params: { webhook_id: ULID } })).status).toBe(404);

    const paused = await call('patch', '/v1/webhooks/{webhook_id}', { auth: c.auth, params: { webhook_id: id }, body: { disabled: true } });
    expect(paused.body.data).toMatchObject({ disabled: true, disabled_reason: 'manual' });
    expect((await call('patch', '/v1/webhooks/{webhook_id}', { auth: c.auth, params: { webhook_id: id }, body: { disabled: false } })).body.data.disabled).toBe(false);
    expect((await call('patch', '/v1/webhooks/{webhook_id}', { auth: c.auth, params: { webhook_id: id }, body: {} })).status).toBe(400);
    expect((await call('patch', '/v1/webhooks/{webhook_id}', { auth: c.auth, params: { webhook_id: id }, raw: ['text/plain', 'x'] })).status).toBe(415);
    expect((await call('patch', '/v1/webhooks/{webhook_id}', { auth: c.auth, params: { webhook_id: id }, body: { url: 'https://10.0.0.1/' } })).status).toBe(422);
    expect((await call('patch', '/v1/webhooks/{webhook_id}', { auth: c.auth, params: { webhook_id: ULID }, body: { disabled: true } })).status).toBe(404);

    const rotated = await call('post', '/v1/webhooks/{webhook_id}/rotate-secret', { auth: c.auth, params: { webhook_id: id } });
    expect(rotated.body.data.secret).not.toBe(created.body.data.secret);
    expect((await call('post', '/v1/webhooks/{webhook_id}/rotate-secret', { auth: c.auth, params: { webhook_id: ULID } })).status).toBe(404);

    expect((await call('delete', '/v1/webhooks/{webhook_id}', { auth: c.auth, params: { webhook_id: id } })).status).toBe(204);
    expect((await call('delete', '/v1/webhooks/{webhook_id}', { auth: c.auth, params: { webhook_id: 'nope' } })).status).toBe(400);
    expect((await call('delete', '/v1/webhooks/{webhook_id}', { auth: free.auth, params: { webhook_id: id } })).status).toBe(403);
  });

  it('delivery routes: success and error answers', async () => {
    const c = await t.customer('business');
    const w = (await call('post', '/v1/webhooks', { auth: c.auth, body: { url: rx.namedUrl(), event: 'trends.surge', subreddit: 'openapi_sub', allow_nonstandard_port: true } })).body.data;
    const params = { webhook_id: w.id };

    const sent = await call('post', '/v1/webhooks/{webhook_id}/test', { auth: c.auth, params });
    expect(sent.status).toBe(202);
    expect((await call('post', '/v1/webhooks/{webhook_id}/test', { auth: c.auth, params: { webhook_id: ULID } })).status).toBe(404);

    // Wait until the delivery has an attempt, so the attempt schema is exercised too.
    for (let i = 0; i < 200; i++) {
      const list = await call('get', '/v1/webhooks/{webhook_id}/deliveries', { auth: c.auth, params });
      if (list.body.data[0]?.state === 'delivered') break;
      await sleep(50);
    }
    const list = await call('get', '/v1/webhooks/{webhook_id}/deliveries', { auth: c.auth, params, query: { limit: '10' } });
    expect(list.body.data[0]).toMatchObject({ id: sent.body.data.delivery_id, state: 'delivered', attempts: [expect.objectContaining({ status_code: 200 })] });
    expect((await call('get', '/v1/webhooks/{webhook_id}/deliveries', { auth: c.auth, params: { webhook_id: ULID } })).status).toBe(404);
    expect((await call('get', '/v1/webhooks/{webhook_id}/deliveries', { auth: c.auth, params, query: { cursor: 'garbage' } })).status).toBe(400);

    const retry = '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry';
    expect((await call('post', retry, { auth: c.auth, params: { ...params, delivery_id: sent.body.data.delivery_id } })).status).toBe(202);
    expect((await call('post', retry, { auth: c.auth, params: { ...params, delivery_id: 'msg_bad' } })).status).toBe(400);
    expect((await call('post', retry, { auth: c.auth, params: { ...params, delivery_id: MSG } })).status).toBe(404);
    expect((await call('post', retry, { params: { ...params, delivery_id: MSG } })).status).toBe(401);
  });

  it('recover and events history routes: success and error answers', async () => {
    const c = await t.customer('business');
    const w = (await call('post', '/v1/webhooks', { auth: c.auth, body: { url: 'https://hooks.example.com/x', event: 'trends.rising', subreddit: 'openapi_events' } })).body.data;
    const params = { webhook_id: w.id };
    await t.app.get(EventsService).emit({ type: 'trends.rising', subreddit: 'openapi_events', data: { n: 1 } });
    const since = new Date(Date.now() - 3_600_000).toISOString();

    const dry = await call('post', '/v1/webhooks/{webhook_id}/recover', { auth: c.auth, params, body: { since, dry_run: true } });
    expect(dry.body.data).toMatchObject({ queued: 0, dry_run: true, next_since: null });
    expect((await call('post', '/v1/webhooks/{webhook_id}/recover', { auth: c.auth, params, body: { since: 'yesterday' } })).status).toBe(400);
    expect((await call('post', '/v1/webhooks/{webhook_id}/recover', { auth: c.auth, params, raw: ['text/plain', 'x'] })).status).toBe(415);
    expect((await call('post', '/v1/webhooks/{webhook_id}/recover', { auth: c.auth, params: { webhook_id: ULID }, body: { since } })).status).toBe(404);
    expect((await call('post', '/v1/webhooks/{webhook_id}/recover', { params, body: { since } })).status).toBe(401);
    expect((await call('post', '/v1/webhooks/{webhook_id}/recover', { auth: (await t.customer('pro')).auth, params, body: { since } })).status).toBe(403);

    const events = await call('get', '/v1/events', { auth: c.auth, query: { event: 'trends.rising', limit: '10' } });
    expect(events.body.data).toEqual([expect.objectContaining({ type: 'trends.rising', subreddit: 'openapi_events', data: { event_id: expect.any(String), subreddit: 'openapi_events', n: 1 } })]);
    expect((await call('get', '/v1/events', { auth: c.auth, query: { event: 'nope' } })).status).toBe(400);
    expect((await call('get', '/v1/events', { auth: (await t.customer('free')).auth })).status).toBe(403);
    expect((await call('get', '/v1/events', {})).status).toBe(401);
  });

  it('portal link route: success and error answers', async () => {
    const c = await t.customer('business');
    const w = (await call('post', '/v1/webhooks', { auth: c.auth, body: { url: 'https://hooks.example.com/x', event: 'trends.surge', subreddit: 'openapi_portal' } })).body.data;
    expect((await call('post', '/v1/portal/sessions', { auth: c.auth, body: {} })).body.data).toEqual({ url: expect.stringMatching(/\/portal#token=thpl_/), expires_at: expect.any(String) });
    expect((await call('post', '/v1/portal/sessions', { auth: c.auth, body: { webhook_id: w.id } })).status).toBe(201);
    expect((await call('post', '/v1/portal/sessions', { auth: c.auth, body: { webhook_id: 'x' } })).status).toBe(400);
    expect((await call('post', '/v1/portal/sessions', { auth: c.auth, body: { webhook_id: ULID } })).status).toBe(404);
    expect((await call('post', '/v1/portal/sessions', { body: {} })).status).toBe(401);
    expect((await call('post', '/v1/portal/sessions', { auth: (await t.customer('pro')).auth, body: {} })).status).toBe(403);
  });

  it('posts routes: success and error answers', async () => {
    const c = await t.customer('free');
    const file = path.join(dir, 'posts.ndjson');
    const post = (id: string) => JSON.stringify({ id, subreddit: 'OpenApiPosts', title: 't', author: 'Doc_Writer', created_utc: 1_700_000_000, score: 3, num_comments: 1, selftext: '' });
    fs.writeFileSync(file, ['oa1', 'oa2', 'oa3'].map(post).join('\n'));
    await t.app.get(IngestService).ingestFile(file);

    const bySub = await call('get', '/v1/subreddits/{subreddit}/posts', { auth: c.auth, params: { subreddit: 'openapiposts' }, query: { limit: '2' } });
    expect(bySub.body.data).toHaveLength(2);
    expect(bySub.body.meta.page).toEqual({ limit: 2, next_cursor: expect.any(String) });
    expect((await call('get', '/v1/subreddits/{subreddit}/posts', { auth: c.auth, params: { subreddit: 'x' } })).status).toBe(400);
    expect((await call('get', '/v1/subreddits/{subreddit}/posts', { params: { subreddit: 'openapiposts' } })).status).toBe(401);

    expect((await call('get', '/v1/users/{username}/posts', { auth: c.auth, params: { username: 'doc_writer' } })).body.data).toHaveLength(3);
    expect((await call('get', '/v1/users/{username}/posts', { auth: c.auth, params: { username: 'a b' } })).status).toBe(400);
    expect((await call('get', '/v1/users/{username}/posts', { auth: c.auth, params: { username: 'doc_writer' }, query: { limit: '26' } })).status).toBe(400);
  });

  it('subreddit coverage route: success and error answers', async () => {
    const c = await t.customer('business');
    const ok = await call('get', '/v1/subreddits/{subreddit}', { auth: c.auth, params: { subreddit: 'openapicoverage' } });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ subreddit: 'openapicoverage', tracked: false, status: 'untracked' });
    expect((await call('get', '/v1/subreddits/{subreddit}', { auth: c.auth, params: { subreddit: 'x' } })).status).toBe(400);
    expect((await call('get', '/v1/subreddits/{subreddit}', { auth: (await t.customer('free')).auth, params: { subreddit: 'openapicoverage' } })).status).toBe(403);
    expect((await call('get', '/v1/subreddits/{subreddit}', { params: { subreddit: 'openapicoverage' } })).status).toBe(401);
  });

  it('health routes', async () => {
    expect((await call('get', '/healthz')).status).toBe(200);
    expect((await call('get', '/readyz')).status).toBe(200);
  });

  it('rate limiting and unexpected errors', async () => {
    const limited = await startTestApp(makeDb(), { adapter: adapter as HttpAdapterName, env: { PLAN_RATE_LIMITS: 'business=1' } });
    try {
      const c = await limited.customer('business');
      const ok = await limited.http().get('/v1/webhooks').set(c.auth);
      contract.check('get', '/v1/webhooks', ok);
      const over = await limited.http().get('/v1/webhooks').set(c.auth);
      expect(over.status).toBe(429);
      contract.check('get', '/v1/webhooks', over);

      const d = await limited.customer('enterprise');
      await limited.app.get<DataSource>(getDataSourceToken()).query('DROP TABLE webhook_subscriptions');
      const broken = await limited.http().get('/v1/webhooks').set(d.auth);
      expect(broken.status).toBe(500);
      contract.check('get', '/v1/webhooks', broken);
    } finally {
      await limited.close();
    }
  });

  it('every documented operation was exercised with its success status and an error status', () => {
    const missing: string[] = [];
    for (const op of contract.operations()) {
      const seen = contract.covered.get(`${op.method} ${op.path}`) ?? new Set<number>();
      const success = op.statuses.filter((s) => s < 300);
      if (!success.every((s) => seen.has(s))) missing.push(`${op.method.toUpperCase()} ${op.path}: success ${success.join('/')}`);
      if (op.statuses.some((s) => s >= 400 && s < 500 && s !== 503) && ![...seen].some((s) => s >= 400)) missing.push(`${op.method.toUpperCase()} ${op.path}: no error answer`);
    }
    expect(missing).toEqual([]);
  });

  it('serves the document at /openapi.json and a reference at /docs that needs nothing from the network', async () => {
    const served = await t.http().get('/openapi.json');
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toMatch(/^application\/json/);
    expect(served.headers['x-request-id']).toBeTruthy();
    expect(served.body).toEqual(contract.doc);

    const page = await t.http().get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThanOrEqual(3);
    for (const ref of refs) {
      expect(ref).toMatch(/^\/docs\//); // same origin: works offline
      const asset = await t.http().get(ref);
      expect({ ref, status: asset.status }).toEqual({ ref, status: 200 });
      expect(Number(asset.headers['content-length'] ?? asset.body.length)).toBeGreaterThan(0);
    }
    const init = await t.http().get('/docs/swagger-ui-init.js');
    expect(init.headers['content-type']).toMatch(/javascript/);
    expect(init.text).toContain("url: '/openapi.json'");
    const unknown = await t.http().get('/docs/package.json');
    expect({ status: unknown.status, code: unknown.body.error?.code }).toEqual({ status: 404, code: 'NOT_FOUND' });
  });
});
