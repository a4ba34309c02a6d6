import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { testDatabases } from '../support/databases';
import { databaseUrl, runCli } from '../support/processes';

/**
 * Issue #25 LOW: an operator CLI customer named like another customer's `cus_` id received that
 * customer's grants. A `cus_` argument is an id now, and such names are refused at issuance.
 */


describe.each(testDatabases())('customer names and ids in operator commands on %s', (dbName, makeDb) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(makeDb());
  });
  afterAll(async () => {
    await t.close();
  });

  it('grants to the customer whose id was given, even when an older customer is named like that id', async () => {
    const victim = await t.customer();
    // A row from before names of the id form were refused.
    const p = (i: number) => (dbName === 'postgres' ? `$${i}` : '?');
    await t.app.get(DataSource).query(`INSERT INTO customers (id, name, plan, created_at) VALUES (${p(1)}, ${p(2)}, 'business', 0)`, ['cus_01ARZ3NDEKTSV4RRFFQ69G5FAV', victim.customerId]);
    const env = { DATABASE_URL: databaseUrl(t.config.database) };
    const grant = await runCli(['customers', 'allow-private', victim.customerId, '10.20.0.0/16:443', '--json'], env);
    expect(grant.stderr).toBe('');
    expect(JSON.parse(grant.stdout)).toMatchObject({ customer_id: victim.customerId, grants: ['10.20.0.0/16:443'] });
    const impostor = await runCli(['customers', 'show-private', 'cus_01ARZ3NDEKTSV4RRFFQ69G5FAV', '--json'], env);
    expect(JSON.parse(impostor.stdout)).toEqual({ customer: victim.customerId, customer_id: 'cus_01ARZ3NDEKTSV4RRFFQ69G5FAV', grants: [] });
    // An unknown id is not looked up as a name.
    const unknown = await runCli(['customers', 'show-private', 'cus_01BX5ZZKBKACTAV9WEVGEMMVRZ'], env);
    expect(unknown).toMatchObject({ code: 1, stderr: 'error: no customer with id cus_01BX5ZZKBKACTAV9WEVGEMMVRZ\n' });
  }, 90_000);

  it('refuses to create a customer whose name has the form of a customer id', async () => {
    const victim = await t.customer();
    const run = await runCli(['keys', 'create', '--customer', victim.customerId, '--plan', 'business', '--json'], { DATABASE_URL: databaseUrl(t.config.database) });
    expect(run).toMatchObject({ code: 1, stdout: '', stderr: 'error: customer name must not start with "cus_", the form of customer ids\n' });
    const rows = await t.app.get(DataSource).query(`SELECT id FROM customers WHERE name = ${dbName === 'postgres' ? '$1' : '?'}`, [victim.customerId]);
    expect(rows).toEqual([]);
  }, 60_000);
});
