import type { CircuitRow } from '../../src/delivery/circuit/circuit-policy';
import { DestinationCircuitStore } from '../../src/delivery/circuit/destination-circuit.store';
import { testDatabases } from '../support/databases';
import { storeFixture, uniqueName } from './store-fixture';

/**
 * The circuit breaker's table on each database: every change is a compare-and-set against the row
 * as the writer last saw it, so two workers' transitions never overwrite each other (the loser
 * gets false, reads again and decides again), and a customer's circuits are only ever its own.
 */
describe.each(testDatabases())('DestinationCircuitStore on %s', (_name, makeDb) => {
  const f = storeFixture(makeDb, { sqlite: DestinationCircuitStore, postgres: DestinationCircuitStore });
  const T0 = new Date('2026-01-02T03:04:05.678Z');
  const row = (over: Partial<CircuitRow> = {}): CircuitRow => ({ state: 'closed', consecutiveFailures: 1, openedUntil: null, openCount: 0, updatedAt: T0, ...over });

  it('inserts a first row once: a second writer that also saw no row loses', async () => {
    const customer = uniqueName('cus_');
    expect(await f.store.replace(customer, 'hooks.test:8443', null, row())).toBe(true);
    expect(await f.store.replace(customer, 'hooks.test:8443', null, row({ consecutiveFailures: 7 }))).toBe(false);
    expect(await f.store.find(customer, 'hooks.test:8443')).toEqual({ customerId: customer, destination: 'hooks.test:8443', ...row() });
  });

  it('updates and deletes only the row as it was seen, and reads the times and counts back as they were written', async () => {
    const customer = uniqueName('cus_');
    const seen = row();
    await f.store.replace(customer, 'a.test', null, seen);
    const open = row({ state: 'open', consecutiveFailures: 10, openedUntil: new Date(T0.getTime() + 30_000), openCount: 1, updatedAt: new Date(T0.getTime() + 1) });
    expect(await f.store.replace(customer, 'a.test', seen, open)).toBe(true);
    // A writer still holding the old row changes nothing.
    expect(await f.store.replace(customer, 'a.test', seen, row({ consecutiveFailures: 2 }))).toBe(false);
    expect(await f.store.replace(customer, 'a.test', seen, null)).toBe(false);
    expect(await f.store.find(customer, 'a.test')).toMatchObject(open);
    expect(await f.store.replace(customer, 'a.test', open, null)).toBe(true);
    expect(await f.store.find(customer, 'a.test')).toBeNull();
  });

  it("answers a customer's circuits by destination, never another customer's at the same destination", async () => {
    const [mine, theirs] = [uniqueName('cus_'), uniqueName('cus_')];
    await f.store.replace(mine, 'shared.test:443', null, row({ consecutiveFailures: 3 }));
    await f.store.replace(theirs, 'shared.test:443', null, row({ consecutiveFailures: 9 }));
    const got = await f.store.forCustomer(mine, ['shared.test:443', 'other.test', 'shared.test:443']);
    expect([...got.keys()]).toEqual(['shared.test:443']);
    expect(got.get('shared.test:443')?.consecutiveFailures).toBe(3);
    expect((await f.store.all()).filter((r) => r.customerId === mine || r.customerId === theirs)).toHaveLength(2);
    expect((await f.store.forCustomer(mine, [])).size).toBe(0);
  });
});
