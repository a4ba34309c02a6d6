import { testDatabases } from './support/databases';
import { startTestApp, TestApp } from './support/app';

/**
 * Portal exchange limits an anonymous client cannot turn against everyone (issue 38, finding 4):
 * refused tokens are counted per client address, a well-formed token against a far larger budget;
 * the address is the TCP peer's unless TRUST_PROXY names the proxy that says otherwise.
 */
describe.each(testDatabases())('portal link exchange limits on %s', (_name, makeDb) => {
  const PORTAL = { 'X-Trendhooks-Portal': '1' };
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  async function token(app: TestApp): Promise<string> {
    const c = await app.customer();
    const res = await app.http().post('/v1/portal/sessions').set(c.auth).send({}).expect(201);
    return new URL(res.body.data.url).hash.replace(/^#token=/, '');
  }
  const exchange = (app: TestApp, body: unknown, headers: Record<string, string> = {}) => app.http().post('/portal/session').set({ ...PORTAL, ...headers }).send(body as object);

  it('31 garbage exchanges lock the garbage out, not a valid unused link', async () => {
    t = await startTestApp(makeDb());
    const valid = await token(t);
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await exchange(t, { token: i % 2 ? 'garbage' : `thpl_${'x'.repeat(i % 40)}` })).status);
    expect(statuses.slice(0, 30)).toEqual(Array(30).fill(401));
    expect(statuses[30]).toBe(429);
    expect((await exchange(t, { token: 'more-garbage' })).status).toBe(429);
    const ok = await exchange(t, { token: valid });
    expect(ok.status).toBe(200);
    expect(ok.headers['x-ratelimit-limit']).toBe('3000');
    // A used link is refused (401), not 429: it is well-formed, and counts as refused.
    expect((await exchange(t, { token: valid })).status).toBe(401);
  }, 60_000);

  it('X-Forwarded-For names the client only with TRUST_PROXY', async () => {
    const env = { PORTAL_EXCHANGES_PER_MINUTE: '2' };
    for (const trusted of [false, true]) {
      t = await startTestApp(makeDb(), { env: trusted ? { ...env, TRUST_PROXY: 'loopback' } : env });
      const from = (ip: string) => ({ 'X-Forwarded-For': ip });
      for (let i = 0; i < 2; i++) expect((await exchange(t, { token: 'garbage' }, from('203.0.113.1'))).status).toBe(401);
      expect((await exchange(t, { token: 'garbage' }, from('203.0.113.1'))).status).toBe(429);
      // Another client behind the same proxy: its own count when the proxy is trusted, else the proxy's (shared).
      expect((await exchange(t, { token: 'garbage' }, from('203.0.113.2'))).status).toBe(trusted ? 401 : 429);
      await t.close();
      t = undefined;
    }
  }, 60_000);
});
