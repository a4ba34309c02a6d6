import { testDatabases } from './support/databases';
import { startTestApp, TestApp } from './support/app';

/**
 * The portal says whose it is, and a link of another customer does not silently replace the live
 * session a browser holds (issue 38, finding 7): POST /portal/session answers 409 until
 * `replace: true`, using nothing up; then the old session ends.
 */
describe.each(testDatabases())('portal session switching on %s', (_name, makeDb) => {
  let t: TestApp;
  const PORTAL = { 'X-Trendhooks-Portal': '1' };
  beforeAll(async () => {
    t = await startTestApp(makeDb());
  });
  afterAll(() => t?.close());

  async function token(auth: Record<string, string>): Promise<string> {
    const res = await t.http().post('/v1/portal/sessions').set(auth).send({}).expect(201);
    return new URL(res.body.data.url).hash.replace(/^#token=/, '');
  }
  const cookieOf = (res: { headers: Record<string, unknown> }) => String(res.headers['set-cookie']).split(';')[0];

  it('names the customer, and asks before a link of another customer replaces the session', async () => {
    const a = await t.customer();
    const b = await t.customer();
    const first = await t.http().post('/portal/session').set(PORTAL).send({ token: await token(a.auth) }).expect(200);
    expect(first.body.data).toMatchObject({ customer_id: a.customerId, customer_name: expect.stringMatching(/^customer-/) });
    const cookie = cookieOf(first);
    const whose = await t.http().get('/portal/session').set({ ...PORTAL, Cookie: cookie }).expect(200);
    expect(whose.body.data).toMatchObject({ customer_id: a.customerId, webhook_id: null });
    expect((await t.http().get('/portal/session').set(PORTAL)).status).toBe(401);

    const bToken = await token(b.auth);
    const refused = await t.http().post('/portal/session').set({ ...PORTAL, Cookie: cookie }).send({ token: bToken });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining(a.customerId) });
    expect(refused.body.error.message).toContain(b.customerId);
    expect(refused.headers['set-cookie']).toBeUndefined();
    // Nothing changed: the session is still A's, the link still unused.
    expect((await t.http().get('/portal/session').set({ ...PORTAL, Cookie: cookie })).body.data.customer_id).toBe(a.customerId);
    expect((await t.http().post('/portal/session').set({ ...PORTAL, Cookie: cookie }).send({ token: bToken, replace: 'yes' })).status).toBe(400);

    const switched = await t.http().post('/portal/session').set({ ...PORTAL, Cookie: cookie }).send({ token: bToken, replace: true }).expect(200);
    expect(switched.body.data.customer_id).toBe(b.customerId);
    expect((await t.http().get('/portal/session').set({ ...PORTAL, Cookie: cookieOf(switched) })).body.data.customer_id).toBe(b.customerId);
    // The replaced session ended.
    expect((await t.http().get('/v1/webhooks').set({ ...PORTAL, Cookie: cookie })).status).toBe(401);
    // A link of the same customer needs no question.
    await t.http().post('/portal/session').set({ ...PORTAL, Cookie: cookieOf(switched) }).send({ token: await token(b.auth) }).expect(200);
  }, 60_000);
});
