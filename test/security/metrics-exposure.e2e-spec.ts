import request from 'supertest';
import { Metrics } from '../../src/metrics/metrics.service';
import { MetricsListener } from '../../src/metrics/metrics.listener';
import { testTargets } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';

/**
 * Issue #12 item 4: `/metrics` named every tracked subreddit (other tenants' interests) to anyone
 * who could reach the API, and cost a database query per scrape. The series now live on a listener
 * of their own (METRICS_PORT, loopback by default); the API listener answers 404 there.
 */
describe.each(testTargets())('metrics exposure on %s', (_name, makeDb, adapter) => {
  let t: TestApp;
  let subreddit: string;

  beforeAll(async () => {
    t = await startTestApp(makeDb(), { adapter, env: { METRICS_PORT: '0' } });
    subreddit = `secret${Math.random().toString(36).slice(2, 10)}`;
    const c = await t.customer();
    expect((await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/m', event: 'trends.surge', subreddit })).status).toBe(201);
    t.app.get(Metrics).pollerError(subreddit);
  });
  afterAll(() => t?.close());

  it('answers /metrics on the API listener with 404 NOT_FOUND, with or without a key', async () => {
    const c = await t.customer();
    for (const res of [
      await t.http().get('/metrics'),
      await t.http().get('/metrics').set(c.auth),
      await t.http().get('/metrics/'),
      await t.http().get('/metrics?format=prometheus'),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', request_id: res.headers['x-request-id'] });
      expect(res.text).not.toContain(subreddit);
    }
    expect((await t.http().head('/metrics')).status).toBe(404);
  });

  it('serves the series, subreddit labels included, on the metrics listener bound to loopback', async () => {
    const listener = t.app.get(MetricsListener);
    expect(listener.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const res = await request(`http://127.0.0.1:${listener.port}`).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.text).toContain(`trendhooks_poller_errors_total{subreddit="${subreddit}"} 1`);
    const post = await request(`http://127.0.0.1:${listener.port}`).post('/metrics');
    expect(post.status).toBe(405);
    expect(post.body.error.code).toBe('METHOD_NOT_ALLOWED');
    // Nothing of the API is reachable there.
    expect((await request(`http://127.0.0.1:${listener.port}`).get('/v1/webhooks')).status).toBe(404);
  });
});

describe.each(testTargets(['express']))('metrics listener configuration on %s', (_name, makeDb) => {
  it('starts no metrics listener while METRICS_PORT is unset', async () => {
    const t = await startTestApp(makeDb());
    try {
      expect(t.app.get(MetricsListener).port).toBeNull();
      expect((await t.http().get('/metrics')).status).toBe(404);
    } finally {
      await t.close();
    }
  });

  it('serves a worker-only process too, and closes the listener with the app', async () => {
    const t = await startTestApp(makeDb(), { role: 'worker', env: { METRICS_PORT: '0' } });
    const port = t.app.get(MetricsListener).port;
    expect(port).not.toBeNull();
    const res = await request(`http://127.0.0.1:${port}`).get('/metrics');
    expect(res.text).toContain('trendhooks_deliveries_total{outcome="delivered"} 0');
    await t.close();
    await expect(request(`http://127.0.0.1:${port}`).get('/metrics')).rejects.toThrow(/ECONNREFUSED/);
  });
});
