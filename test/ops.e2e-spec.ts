import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiKeyService } from '../src/auth/api-key.service';
import { EventsService } from '../src/delivery/events.service';
import request from 'supertest';
import { MetricsListener } from '../src/metrics/metrics.listener';
import { Metrics } from '../src/metrics/metrics.service';
import { testDatabases, testTargets } from './support/databases';
import { startTestApp, TestApp } from './support/app';
import { makeCert, Receiver, sleep, TestCert } from './support/receiver';

const UNKNOWN_ULID = '01ARZ3NDEKTSV4RRFFQ69G5FAV';

/** The value of one exposition line, e.g. `http_request_duration_seconds_count{method="GET",…}`; undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const httpCount = (text: string, method: string, route: string, status: number) =>
  sample(text, `http_request_duration_seconds_count{method="${method}",route="${route}",status="${status}"}`);

/** GET on the app's own metrics listener (started by METRICS_PORT=0), never the API's. */
function scrape(t: TestApp, path = '/metrics') {
  const port = t.app.get(MetricsListener).port;
  if (port === null) throw new Error('no metrics listener: start the app with METRICS_PORT');
  return request(`http://127.0.0.1:${port}`).get(path);
}

async function until<T>(fn: () => Promise<T>, pred: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (pred(v)) return v;
    if (Date.now() > end) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(v).slice(0, 300)}`);
    await sleep(50);
  }
}

describe.each(testTargets())('metrics on %s', (_name, makeDb, adapter) => {
  let t: TestApp;
  let cert: TestCert;
  let rx: Receiver;

  beforeAll(async () => {
    cert = makeCert();
    rx = await Receiver.start(cert);
    t = await startTestApp(makeDb(), {
      adapter,
      env: { METRICS_PORT: '0', SSRF_ALLOW_CIDRS: '127.0.0.1/32', DELIVERY_CA_FILE: cert.caFile, DELIVERY_POLL_INTERVAL_MS: '50', DELIVERY_TIMEOUT_MS: '2000', DELIVERY_LEASE_MS: '8000' },
    });
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  it('exposes request timings by route pattern, delivery, event and poller series, and process metrics', async () => {
    const c = await t.customer();
    const subreddit = `metrics${Math.random().toString(36).slice(2, 10)}`;
    const created = await t.http().post('/v1/webhooks').set(c.auth).send({ url: rx.namedUrl(), event: 'trends.surge', subreddit, allow_nonstandard_port: true });
    expect(created.status).toBe(201);
    const id: string = created.body.data.id;
    expect((await t.http().get(`/v1/webhooks/${id}`).set(c.auth)).status).toBe(200);
    expect((await t.http().get(`/v1/webhooks/${UNKNOWN_ULID}`).set(c.auth)).status).toBe(404);
    expect((await t.http().get('/v1/webhooks').set('Authorization', 'Bearer nope')).status).toBe(401);
    expect((await t.http().get('/no/such/route-4242')).status).toBe(404);

    await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { count: 1 } });
    await rx.waitForCount(1);
    const ds = t.app.get<DataSource>(getDataSourceToken());
    const q = t.config.database.type === 'postgres' ? 'SELECT state FROM deliveries WHERE webhook_id = $1' : 'SELECT state FROM deliveries WHERE webhook_id = ?';
    await until(() => ds.query(q, [id]), (rows: { state: string }[]) => rows[0]?.state === 'delivered');
    t.app.get(Metrics).pollerError('typescript');

    const res = await scrape(t);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain;.*version=0\.0\.4/);
    const text = res.text;
    // Route patterns, never raw URLs (ids would make the series unbounded).
    expect(httpCount(text, 'POST', '/v1/webhooks', 201)).toBe(1);
    expect(httpCount(text, 'GET', '/v1/webhooks/:webhook_id', 200)).toBe(1);
    expect(httpCount(text, 'GET', '/v1/webhooks/:webhook_id', 404)).toBe(1);
    expect(httpCount(text, 'GET', '/v1/webhooks', 401)).toBe(1);
    expect(httpCount(text, 'GET', 'unmatched', 404)).toBe(1);
    expect(text).not.toContain(id);
    expect(text).not.toContain(UNKNOWN_ULID);
    expect(text).not.toContain('route-4242');
    expect(text).toContain('http_request_duration_seconds_bucket{le="0.005",method="POST",route="/v1/webhooks",status="201"}');

    expect(sample(text, 'trendhooks_deliveries_total{outcome="delivered"}')).toBe(1);
    expect(sample(text, 'trendhooks_deliveries_total{outcome="transient"}')).toBe(0);
    expect(sample(text, 'trendhooks_delivery_attempt_duration_seconds_count{outcome="delivered"}')).toBe(1);
    expect(sample(text, 'trendhooks_events_total{type="trends.surge"}')).toBe(1);
    expect(sample(text, 'trendhooks_poller_errors_total{subreddit="typescript"}')).toBe(1);
    expect(sample(text, 'trendhooks_delivery_queue_depth')).toBe(0);
    expect(sample(text, 'trendhooks_delivery_oldest_due_age_seconds')).toBe(0);
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
  });

  it('is served on its own listener, not rate limited and with no key, and not at all on the API listener', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await scrape(t);
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
    const api = await t.http().get('/metrics');
    expect(api.status).toBe(404);
    expect(api.body.error).toMatchObject({ code: 'NOT_FOUND', request_id: api.headers['x-request-id'] });
    const other = await scrape(t, '/healthz');
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('NOT_FOUND');
  });
});

describe.each(testDatabases())('queue gauges and separate registries on %s', (_name, makeDb) => {
  it('counts due deliveries and the age of the oldest, in a registry of its own', async () => {
    // Two apps in one process: each counts only its own traffic (no shared global registry).
    const other = await startTestApp(makeDb(), { env: { METRICS_PORT: '0' } });
    const t = await startTestApp(makeDb(), { role: 'api', env: { METRICS_PORT: '0' } }); // no worker: deliveries stay queued
    try {
      const c = await t.customer();
      const subreddit = `queue${Math.random().toString(36).slice(2, 10)}`;
      expect((await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/q', event: 'trends.rising', subreddit })).status).toBe(201);
      for (let i = 0; i < 2; i++) await t.app.get(EventsService).emit({ type: 'trends.rising', subreddit, data: { i } });
      await sleep(1100);
      const text = (await scrape(t)).text;
      expect(sample(text, 'trendhooks_delivery_queue_depth')).toBe(2);
      expect(sample(text, 'trendhooks_delivery_oldest_due_age_seconds')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'trendhooks_events_total{type="trends.rising"}')).toBe(2);
      const otherText = (await scrape(other)).text;
      expect(sample(otherText, 'trendhooks_events_total{type="trends.rising"}')).toBeUndefined();
      expect(httpCount(otherText, 'POST', '/v1/webhooks', 201)).toBeUndefined();
    } finally {
      await t.close();
      await other.close();
    }
  });
});

describe.each(testTargets())('health on %s', (_name, makeDb, adapter) => {
  it('answers /healthz and /readyz without a key or a rate limit', async () => {
    const t = await startTestApp(makeDb(), { adapter });
    try {
      for (let i = 0; i < 2; i++) {
        const live = await t.http().get('/healthz');
        expect(live.status).toBe(200);
        expect(live.body).toEqual({ status: 'ok' });
        expect(live.headers['x-ratelimit-limit']).toBeUndefined();
        const ready = await t.http().get('/readyz');
        expect(ready.status).toBe(200);
        expect(ready.body).toEqual({ status: 'ok', checks: { database: 'up' } });
      }
    } finally {
      await t.close();
    }
  });

  it('is not ready (503 in the error envelope) while Redis is unreachable, yet /v1 fails open and stays alive', async () => {
    // Port 1: nothing listens there.
    const t = await startTestApp(makeDb(), { adapter, env: { REDIS_URL: 'redis://127.0.0.1:1', PLAN_RATE_LIMITS: 'business=2' } });
    try {
      const ready = await t.http().get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ error: { code: 'SERVICE_UNAVAILABLE', message: 'not ready: redis unreachable', request_id: ready.headers['x-request-id'] } });
      expect((await t.http().get('/healthz')).status).toBe(200);
      // Counted in this process instead: still limited, never a 500.
      const c = await t.customer();
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await t.http().get('/v1/webhooks').set(c.auth)).status);
      expect(statuses).toEqual([200, 200, 429]);
      expect(t.logs.lines.filter((l) => l.includes('Redis is unavailable'))).toHaveLength(1);
    } finally {
      await t.close();
    }
  });

  it('is not ready (503) while the database fails', async () => {
    const t = await startTestApp(makeDb(), { adapter });
    // The readiness ping fails as it would with the server gone (destroying the pool would also stop the worker's LISTEN).
    const ping = jest.spyOn(t.app.get<DataSource>(getDataSourceToken()), 'query').mockRejectedValue(new Error('connect ECONNREFUSED'));
    try {
      const ready = await t.http().get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'not ready: database unreachable' });
      expect(ready.text).not.toContain('ECONNREFUSED');
      expect((await t.http().get('/healthz')).status).toBe(200);
    } finally {
      ping.mockRestore();
      await t.close();
    }
  });
});

describe.each(testTargets())('JSON logs on %s', (_name, makeDb, adapter) => {
  const lines: string[] = [];
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(makeDb(), { adapter, jsonLogs: { write: (line) => void lines.push(line) } });
  });
  afterAll(() => t?.close());

  it('never writes an API key or a webhook secret, and ties every line to the X-Request-Id', async () => {
    const c = await t.customer();
    const marker = `/logs-${Math.random().toString(36).slice(2, 10)}`;
    const created = await t.http().post('/v1/webhooks').set(c.auth).send({ url: `https://hooks.example.com${marker}`, event: 'trends.surge', subreddit: 'typescript' });
    expect(created.status).toBe(201);
    const w = created.body.data;
    expect((await t.http().get('/v1/webhooks').set(c.auth)).status).toBe(200);
    const rotated = await t.http().post(`/v1/webhooks/${w.id}/rotate-secret`).set(c.auth);
    expect(rotated.status).toBe(200);
    // A real key, revoked: 401.
    const revoked = await t.customer();
    await t.app.get(ApiKeyService).revoke(revoked.prefix);
    const unauthorized = await t.http().get('/v1/webhooks').set(revoked.auth).set('Cookie', 'session=cookie-secret-123');
    expect(unauthorized.status).toBe(401);
    // A key where it does not belong (the query string) is not logged either.
    expect((await t.http().get(`/v1/webhooks?api_key=${c.key}`).set(c.auth)).status).toBe(200);
    // A 500 with the real key.
    await t.app.get<DataSource>(getDataSourceToken()).query('DROP TABLE webhooks');
    const failed = await t.http().get('/v1/webhooks').set(c.auth);
    expect(failed.status).toBe(500);
    await sleep(50); // the completion line is written on the response's finish

    const all = lines.join('');
    for (const secret of [c.key, revoked.key, w.secret, rotated.body.data.secret, 'cookie-secret-123']) {
      expect(secret).toBeTruthy();
      expect(all).not.toContain(secret);
    }
    expect(all).not.toContain('whsec_');
    expect(all).not.toMatch(/th_live_[0-9A-Za-z]{9,}/);
    expect(all).not.toContain(marker); // bodies are never logged

    const records = lines.map((l) => JSON.parse(l));
    // One line per request ("request completed", or "request errored" for a 5xx).
    const completed = (res: { headers: Record<string, string> }) => records.find((r) => r.req && r.request_id === res.headers['x-request-id']);
    for (const res of [created, unauthorized, failed]) {
      const rec = completed(res);
      expect(rec).toBeDefined();
      expect(rec.req.id).toBe(res.headers['x-request-id']);
      expect(rec.req.headers.authorization).toBe('[redacted]');
      expect(rec.res.statusCode).toBe(res.status);
    }
    expect(completed(unauthorized).req.headers.cookie).toBe('[redacted]');
    expect(completed(failed).level).toBe('error');
    expect(completed(created).level).toBe('info');
    // The 500's cause is logged for operators under the same request id.
    expect(records.some((r) => r.msg === 'unhandled error' && r.request_id === failed.body.error.request_id)).toBe(true);
  });

  it('leaves successful probes out of the access log (README: /healthz and /readyz are not logged when they succeed)', async () => {
    const probe = await t.http().get('/healthz');
    expect(probe.status).toBe(200);
    const listed = await t.http().get('/v1/webhooks');
    expect(listed.status).toBe(401);
    await sleep(50); // the completion line is written on the response's finish
    const records = lines.map((l) => JSON.parse(l));
    const lineOf = (res: { headers: Record<string, string> }) => records.find((r) => r.req && r.request_id === res.headers['x-request-id']);
    // The id is still given (X-Request-Id); only the access line is left out.
    expect(probe.headers['x-request-id']).toMatch(/^req_/);
    expect(lineOf(probe)).toBeUndefined();
    expect(lineOf(listed)).toBeDefined();
  });
});
