import { ApiKeyService } from '../src/auth/api-key.service';
import { testDatabases } from './support/databases';
import { startTestApp, TestApp } from './support/app';
import { databaseUrl, runCli } from './support/processes';

/**
 * Revocation ends everything a key opened: after `keys revoke` (another process, the CLI) the
 * customer's portal sessions answer 401 on every route at once, and its unused links cannot be
 * exchanged; `portal revoke --customer` does the same and leaves the keys valid. A portal session
 * spends the budget of the key that opened it.
 */
describe.each(testDatabases())('portal revocation on %s', (_name, makeDb) => {
  let t: TestApp;
  let env: Record<string, string>;
  const PORTAL = { 'X-Trendhooks-Portal': '1' };
  const HOOK = { url: 'https://hooks.example.com/revoke', event: 'trends.surge', subreddit: 'typescript' };

  beforeAll(async () => {
    t = await startTestApp(makeDb());
    env = { DATABASE_URL: databaseUrl(t.config.database), CURSOR_SECRET: 'e2e-cursor-secret-0123456789abcdefghijklmnop', REDDIT_POLLING: 'off' };
  });
  afterAll(() => t?.close());

  async function link(auth: Record<string, string>): Promise<string> {
    const res = await t.http().post('/v1/portal/sessions').set(auth).send({}).expect(201);
    return new URL(res.body.data.url).hash.replace(/^#token=/, '');
  }

  async function session(auth: Record<string, string>): Promise<Record<string, string>> {
    const ex = await t.http().post('/portal/session').set(PORTAL).send({ token: await link(auth) }).expect(200);
    return { ...PORTAL, Cookie: String(ex.headers['set-cookie']).split(';')[0] };
  }

  /** The status of each thing a session can do: list, get, rotate, PATCH url, create. */
  async function statuses(s: Record<string, string>, webhookId: string): Promise<number[]> {
    return [
      (await t.http().get('/v1/webhooks').set(s)).status,
      (await t.http().get(`/v1/webhooks/${webhookId}`).set(s)).status,
      (await t.http().post(`/v1/webhooks/${webhookId}/rotate-secret`).set(s).send({})).status,
      (await t.http().patch(`/v1/webhooks/${webhookId}`).set(s).send({ url: 'https://hooks.example.com/patched' })).status,
      (await t.http().post('/v1/webhooks').set(s).send({ ...HOOK, subreddit: 'rust' })).status,
    ];
  }

  it('keys revoke ends the sessions and unused links the customer had, at once', async () => {
    const c = await t.customer();
    const w = (await t.http().post('/v1/webhooks').set(c.auth).send(HOOK).expect(201)).body.data;
    const s = await session(c.auth);
    const unused = await link(c.auth);
    expect(await statuses(s, w.id)).toEqual([200, 200, 200, 200, 201]);

    expect(await runCli(['keys', 'revoke', c.prefix], env)).toMatchObject({ code: 0 });
    // No wait: the app process reads the session's row per request.
    expect(await statuses(s, w.id)).toEqual([401, 401, 401, 401, 401]);
    expect((await t.http().post('/portal/session').set(PORTAL).send({ token: unused })).status).toBe(401);
  }, 120_000);

  it("revoking one key of several ends the customer's portal too", async () => {
    const name = `two-keys-${Date.now()}`;
    const first = await t.app.get(ApiKeyService).issue(name, 'business');
    const second = await t.app.get(ApiKeyService).issue(name, 'business');
    const c = { auth: { Authorization: `Bearer ${first.key}` }, prefix: first.prefix };
    const w = (await t.http().post('/v1/webhooks').set(c.auth).send(HOOK).expect(201)).body.data;
    const s = await session({ Authorization: `Bearer ${second.key}` });
    expect(await runCli(['keys', 'revoke', c.prefix], env)).toMatchObject({ code: 0 });
    expect((await t.http().get(`/v1/webhooks/${w.id}`).set(s)).status).toBe(401);
    // The key left still opens a new one.
    const again = await session({ Authorization: `Bearer ${second.key}` });
    expect((await t.http().get(`/v1/webhooks/${w.id}`).set(again)).status).toBe(200);
  }, 120_000);

  it('portal revoke --customer ends sessions and links, and leaves the keys valid', async () => {
    const c = await t.customer();
    const other = await t.customer();
    const w = (await t.http().post('/v1/webhooks').set(c.auth).send(HOOK).expect(201)).body.data;
    const ow = (await t.http().post('/v1/webhooks').set(other.auth).send(HOOK).expect(201)).body.data;
    const s = await session(c.auth);
    const os = await session(other.auth);
    const unused = await link(c.auth);

    const run = await runCli(['portal', 'revoke', '--customer', c.customerId, '--json'], env);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toMatchObject({ customer_id: c.customerId, sessions: 1, links: 1 });
    expect(await statuses(s, w.id)).toEqual([401, 401, 401, 401, 401]);
    expect((await t.http().post('/portal/session').set(PORTAL).send({ token: unused })).status).toBe(401);
    await t.http().get(`/v1/webhooks/${w.id}`).set(c.auth).expect(200);
    // Another customer's session is untouched.
    expect((await t.http().get(`/v1/webhooks/${ow.id}`).set(os)).status).toBe(200);
    expect(await runCli(['portal', 'revoke', '--customer', 'nobody-at-all'], env)).toMatchObject({ code: 1, stderr: 'error: no customer named nobody-at-all\n' });
  }, 120_000);

  it("a portal session spends the budget of the key that opened it, not one of its own", async () => {
    const c = await t.customer();
    const w = (await t.http().post('/v1/webhooks').set(c.auth).send(HOOK).expect(201)).body.data;
    const s = await session(c.auth);
    const remaining = async (h: Record<string, string>) => Number((await t.http().get(`/v1/webhooks/${w.id}`).set(h).expect(200)).headers['x-ratelimit-remaining']);
    const byKey = await remaining(c.auth);
    expect(await remaining(s)).toBe(byKey - 1);
    expect(await remaining(c.auth)).toBe(byKey - 2);
  }, 120_000);
});
