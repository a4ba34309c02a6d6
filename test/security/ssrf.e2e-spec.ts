import { EventsService } from '../../src/delivery/events.service';
import { testTargets } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';
import { sleep } from '../support/receiver';

/**
 * SSRF at creation and DNS rebinding at delivery: the attacker's spellings of internal addresses
 * that test/webhooks.e2e-spec.ts (plain forms: 127.0.0.1, [::1], 0x7f000001, metadata, private
 * names) and test/delivery.e2e-spec.ts (a name rebound to 127.0.0.2, redirects) do not already
 * try. Nothing here connects anywhere: creation only resolves (a fixed DNS table), and rebinding
 * targets are loopback addresses, refused before any connect.
 */
describe.each(testTargets())('SSRF spellings on %s', (_name, makeDb, adapter) => {
  let t: TestApp;
  let auth: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp(makeDb(), { adapter, env: { PLAN_RATE_LIMITS: 'business=100000' } });
    auth = (await t.customer()).auth;
    t.dns.set('v6loop.example.com', ['::1']);
    t.dns.set('mapped.example.com', ['::ffff:127.0.0.1']);
    t.dns.set('meta.example.com', ['169.254.169.254']);
    t.dns.set('zero.example.com', ['0.0.0.0']);
  });
  afterAll(() => t?.close());

  const create = (url: string) =>
    t.http().post('/v1/webhooks').set(auth).send({ url, event: 'trends.surge', subreddit: 'ssrfcases' });

  it.each([
    ['https://2130706433/', '127.0.0.1'],
    ['https://0177.0.0.1/', '127.0.0.1'],
    ['https://127.1/', '127.0.0.1'],
    ['https://0.0.0.0/', '0.0.0.0'],
    ['https://[0:0:0:0:0:0:0:1]/', '::1'],
    ['https://[::]/', '::'],
    ['https://[::ffff:7f00:1]/', '127.0.0.1'],
    ['https://[fe80::1]/', 'fe80::1'],
    ['https://[fc00::1]/', 'fc00::1'],
    ['https://100.64.0.1/', '100.64.0.1'],
    ['https://192.168.0.1./', '192.168.0.1'],
    ['https://224.0.0.1/', '224.0.0.1'],
    ['https://255.255.255.255/', '255.255.255.255'],
    ['https://LOCALHOST/', 'localhost'],
    ['https://localhost./', 'localhost'],
    ['https://api.localhost/', 'localhost'],
    ['https://v6loop.example.com/', '::1'],
    ['https://mapped.example.com/', '127.0.0.1'],
    ['https://meta.example.com/', '169.254.169.254'],
    ['https://zero.example.com/', '0.0.0.0'],
    // WHATWG URL reads a backslash as a slash: the host is 127.0.0.1, as a fetch would connect to.
    ['https://127.0.0.1\\@hooks.example.com/', '127.0.0.1'],
  ])('refuses %s with 422 WEBHOOK_DESTINATION_BLOCKED naming %s', async (url, named) => {
    const res = await create(url);
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 422, code: 'WEBHOOK_DESTINATION_BLOCKED' });
    expect(res.body.error.message.toLowerCase()).toContain(named);
  });

  it.each([
    'https://hooks.example.com@127.0.0.1/',
    'https://hooks.example.com:443@127.0.0.1/',
    'http://127.0.0.1/',
    'file:///etc/passwd',
    'gopher://127.0.0.1:6379/_INFO',
  ])('refuses %s with 400 VALIDATION_ERROR (userinfo, scheme), before any lookup', async (url) => {
    const res = await create(url);
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
  });
});

describe.each(testTargets(['express']))('DNS rebinding at delivery on %s', (_name, makeDb) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(makeDb(), { env: { DELIVERY_POLL_INTERVAL_MS: '50', DELIVERY_RETRY_SCHEDULE: '0.2,0.4' } });
  });
  afterAll(() => t?.close());

  it.each([
    [['::1'], '::1'],
    [['0.0.0.0'], '0.0.0.0'],
    [['::ffff:127.0.0.1'], '127.0.0.1'],
    [['127.0.0.1', '127.0.0.2'], '127.0.0.1'],
    [['127.255.255.254'], '127.255.255.254'],
  ])('refuses a name that resolved publicly at creation and rebinds to %j, as a permanent failure', async (addresses, named) => {
    const host = `rb${Math.random().toString(36).slice(2, 10)}.example.com`;
    t.dns.set(host, ['93.184.216.34']);
    const c = await t.customer();
    const subreddit = `rb${Math.random().toString(36).slice(2, 12)}`;
    const created = await t.http().post('/v1/webhooks').set(c.auth).send({ url: `https://${host}/hook`, event: 'trends.surge', subreddit });
    expect(created.status).toBe(201);
    t.dns.set(host, addresses);
    await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { count: 1 } });
    let d: any;
    for (let i = 0; i < 200 && d?.state !== 'failed'; i++) {
      await sleep(50);
      d = (await t.http().get(`/v1/webhooks/${created.body.data.id}/deliveries`).set(c.auth)).body.data[0];
    }
    expect(d.state).toBe('failed');
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0]).toMatchObject({ status_code: null, outcome: 'permanent', error_class: 'destination_blocked' });
    expect(d.attempts[0].response_excerpt).toContain(named);
  });
});
