import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiKeyService } from '../src/auth/api-key.service';
import { testDatabases } from './support/databases';
import { startTestApp, TestApp } from './support/app';

/** Operator key issuance (`trendhooks keys create`, and in-process from a host app) on both databases. */
describe.each(testDatabases())('API key issuance on %s', (_name, makeDb) => {
  let t: TestApp;
  let keys: ApiKeyService;

  beforeAll(async () => {
    t = await startTestApp(makeDb());
    keys = t.app.get(ApiKeyService);
  });
  afterAll(() => t?.close());

  it('creates the customer once, moves it to a new plan, and every issued key authenticates', async () => {
    const first = await keys.issue('  acme-issuance  ', 'free');
    expect(first).toMatchObject({ customer: 'acme-issuance', plan: 'free', created_customer: true });
    expect(first.key).toMatch(/^th_live_/);
    expect(first.key.startsWith(first.prefix)).toBe(true);

    const second = await keys.issue('acme-issuance', 'business');
    expect(second).toMatchObject({ customer_id: first.customer_id, plan: 'business', created_customer: false });
    expect(second.key).not.toBe(first.key);

    for (const k of [first.key, second.key]) {
      const p = await keys.authenticate(`Bearer ${k}`);
      expect(p).toMatchObject({ customerId: first.customer_id, plan: 'business' });
    }
    // The plan moved for the customer, so the older key now reaches Business+ routes too.
    const res = await t.http().get('/v1/webhooks').set({ Authorization: `Bearer ${first.key}` });
    expect(res.status).toBe(200);
  });

  it('issues keys for one new customer concurrently with API traffic: one customer, every key stored', async () => {
    const c = await t.customer();
    const traffic = Array.from({ length: 20 }, () => t.http().get('/v1/webhooks').set(c.auth));
    const issued = await Promise.all(Array.from({ length: 20 }, () => keys.issue('burst-issuance', 'pro').catch((e: Error) => e)));
    const answers = await Promise.all(traffic);
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    // A racing first insert of the same name may lose on the unique name (PostgreSQL); none may half-apply.
    const ok = issued.filter((x): x is Exclude<typeof x, Error> => !(x instanceof Error));
    expect(ok.length).toBeGreaterThan(0);
    expect(new Set(ok.map((x) => x.customer_id)).size).toBe(1);
    const ds = t.app.get<DataSource>(getDataSourceToken());
    const [{ n }] = await ds.query(`SELECT COUNT(*) AS n FROM api_keys WHERE customer_id = ${_name === 'postgres' ? '$1' : '?'}`, [ok[0].customer_id]);
    expect(Number(n)).toBe(ok.length);
    for (const x of ok) await expect(keys.authenticate(`Bearer ${x.key}`)).resolves.toMatchObject({ customerId: ok[0].customer_id });
  });

  it('refuses a bad customer name or plan with VALIDATION_ERROR and stores nothing', async () => {
    await expect(keys.issue('   ', 'pro')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(keys.issue('x'.repeat(201), 'pro')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(keys.issue('nobody-issuance', 'platinum')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    const ds = t.app.get<DataSource>(getDataSourceToken());
    const rows = await ds.query(`SELECT id FROM customers WHERE name = ${_name === 'postgres' ? '$1' : '?'}`, ['nobody-issuance']);
    expect(rows).toHaveLength(0);
  });
});
