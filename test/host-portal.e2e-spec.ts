import { INestApplication } from '@nestjs/common';
import { ModulesContainer, NestFactory } from '@nestjs/core';
import request from 'supertest';
import { testDatabases, TestDatabase } from './support/databases';
import { TEST_DNS } from './support/app';
import { HostAuthAppModule, HostDirectory } from './host-app/host-auth.module';

/**
 * PortalModule inside a host Nest app with its own identity (no API keys): links are minted for the
 * host's principals through its PrincipalResolver, and the session they give reaches that tenant's
 * webhooks only. The page may be framed by the configured origins only; nothing is registered globally.
 */
describe.each(testDatabases())('the portal in a host app on %s', (_name, makeDb) => {
  let db: TestDatabase;
  let app: INestApplication;
  let http: () => ReturnType<typeof request>;
  const as = (token: string) => ({ 'X-Host-User': token });
  const PORTAL = { 'X-Trendhooks-Portal': '1' };

  beforeAll(async () => {
    db = makeDb();
    app = await NestFactory.create(HostAuthAppModule.forRoot(await db.create(), TEST_DNS, { frameAncestors: ['https://app.example.com'] }), { bodyParser: false, logger: false, abortOnError: false });
    await app.init();
    http = () => request(app.getHttpServer());
    const directory = app.get(HostDirectory);
    directory.addUser('tok-ada', { id: 'ada', tenantId: 'acme' }, 'business');
    directory.addUser('tok-cy', { id: 'cy', tenantId: 'globex' }, 'enterprise');
    directory.addUser('tok-pat', { id: 'pat', tenantId: 'proco' }, 'pro');
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it("mints links for the host's principals; the session acts for that tenant only", async () => {
    const mine = (await http().post('/v1/webhooks').set(as('tok-ada')).send({ url: 'https://hooks.example.com/a', event: 'trends.surge', subreddit: 'typescript' }).expect(201)).body.data;
    const theirs = (await http().post('/v1/webhooks').set(as('tok-cy')).send({ url: 'https://hooks.example.com/c', event: 'trends.surge', subreddit: 'rust' }).expect(201)).body.data;
    expect((await http().post('/v1/portal/sessions').set(as('tok-pat')).send({})).body.error.code).toBe('PLAN_REQUIRED');
    expect((await http().post('/v1/portal/sessions').send({})).status).toBe(401);

    const link = await http().post('/v1/portal/sessions').set(as('tok-ada')).set('Host', 'host.example:8443').send({});
    expect(link.status).toBe(201);
    const url = new URL(link.body.data.url);
    expect(url.origin + url.pathname).toBe('http://host.example:8443/portal');
    const ex = await http().post('/portal/session').set(PORTAL).send({ token: url.hash.slice('#token='.length) }).expect(200);
    const cookie = String(ex.headers['set-cookie']).split(';')[0];
    const session = { ...PORTAL, Cookie: cookie };
    const list = await http().get('/v1/webhooks').set(session).expect(200);
    expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([mine.id]);
    expect((await http().get(`/v1/webhooks/${theirs.id}`).set(session)).status).toBe(404);
    // Without the portal header a leftover portal cookie is ignored: the host's own identity answers.
    expect((await http().get(`/v1/webhooks/${theirs.id}`).set('Cookie', cookie).set(as('tok-cy'))).status).toBe(200);
    expect((await http().get(`/v1/webhooks/${mine.id}`).set('Cookie', cookie)).status).toBe(401);
  });

  it('serves the page with its CSP, framed by the configured origin only', async () => {
    const page = await http().get('/portal').expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors https://app.example.com",
    );
    expect(page.headers['x-frame-options']).toBeUndefined();
    expect(page.text).not.toMatch(/<script>|<style>|\sstyle=|\son\w+=/);
    const js = await http().get('/portal/assets/portal.js').expect(200);
    expect(js.headers['content-type']).toMatch(/^application\/javascript/);
    await http().get('/portal/assets/portal.css').expect(200);
    expect((await http().get('/portal/assets/..%2Fportal-page.controller.js')).status).toBe(404);
  });

  it('registers nothing globally: the only APP_* providers are the host\'s', () => {
    const owners: string[] = [];
    for (const mod of app.get(ModulesContainer).values()) {
      for (const token of mod.providers.keys()) if (typeof token === 'string' && /^APP_(GUARD|PIPE|FILTER|INTERCEPTOR)/.test(token)) owners.push(mod.metatype.name);
    }
    expect([...new Set(owners)]).toEqual(['HostAuthAppModule']);
  });
});
