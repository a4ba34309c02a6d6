import { testDatabases } from './support/databases';
import { startTestApp, TestApp } from './support/app';
import { databaseUrl, runCli } from './support/processes';

/** `trendhooks portal link`: an operator mints a customer's link; the link works once, in the running service. */
describe.each(testDatabases())('trendhooks portal link on %s', (_name, makeDb) => {
  let t: TestApp;
  let env: Record<string, string>;
  const PORTAL = { 'X-Trendhooks-Portal': '1' };

  beforeAll(async () => {
    t = await startTestApp(makeDb());
    env = { DATABASE_URL: databaseUrl(t.config.database), CURSOR_SECRET: 'e2e-cursor-secret-0123456789abcdefghijklmnop', REDDIT_POLLING: 'off', PORTAL_BASE_URL: 'https://hooks.example.org/tools' };
  });
  afterAll(() => t?.close());

  it("mints a link to the customer's webhooks, or to one of them, that the service accepts once", async () => {
    const c = await t.customer();
    const w = (await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/cli', event: 'trends.surge', subreddit: 'typescript' }).expect(201)).body.data;
    const other = (await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/cli2', event: 'trends.surge', subreddit: 'rust' }).expect(201)).body.data;

    const run = await runCli(['portal', 'link', '--customer', c.customerId, '--webhook', w.id, '--json'], env);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const link = JSON.parse(run.stdout);
    expect(link).toEqual({ customer: expect.any(String), customer_id: c.customerId, webhook_id: w.id, url: expect.stringMatching(/^https:\/\/hooks\.example\.org\/tools\/portal#token=thpl_/), expires_at: expect.any(String) });
    const token = new URL(link.url).hash.replace(/^#token=/, '');
    const ex = await t.http().post('/portal/session').set(PORTAL).send({ token }).expect(200);
    const session = { ...PORTAL, Cookie: String(ex.headers['set-cookie']).split(';')[0] };
    await t.http().get(`/v1/webhooks/${w.id}`).set(session).expect(200);
    expect((await t.http().get(`/v1/webhooks/${other.id}`).set(session)).status).toBe(404);
    expect((await t.http().post('/portal/session').set(PORTAL).send({ token })).status).toBe(401);

    const plain = await runCli(['portal', 'link', '--customer', link.customer], env);
    expect(plain).toMatchObject({ code: 0, stdout: expect.stringMatching(/^https:\/\/hooks\.example\.org\/tools\/portal#token=thpl_\S+\n\(single use, expires \S+Z\)\n$/) });
  }, 60_000);

  it('refuses an unknown customer, a plan below Business and a webhook of another customer', async () => {
    expect(await runCli(['portal', 'link', '--customer', 'nobody-at-all'], env)).toMatchObject({ code: 1, stderr: 'error: no customer named nobody-at-all\n' });
    const pro = await t.customer('pro');
    expect(await runCli(['portal', 'link', '--customer', pro.customerId], env)).toMatchObject({ code: 1, stderr: expect.stringMatching(/needs the Business plan or above; .* is on pro/) });
    const a = await t.customer();
    const b = await t.customer();
    const bHook = (await t.http().post('/v1/webhooks').set(b.auth).send({ url: 'https://hooks.example.com/b', event: 'trends.surge', subreddit: 'golang' }).expect(201)).body.data;
    expect(await runCli(['portal', 'link', '--customer', a.customerId, '--webhook', bHook.id], env)).toMatchObject({ code: 1, stderr: `error: webhook ${bHook.id} not found\n` });
    expect((await runCli(['portal', 'link'], env)).code).not.toBe(0);
  }, 60_000);
});
