import { Worker } from 'node:worker_threads';
import { CustomerEntity } from '../../src/auth/customer.entity';
import { newId, newUlid } from '../../src/common/ids';
import { deliveryId } from '../../src/delivery/delivery-id';
import { SqliteDeliveryQueue } from '../../src/delivery/queue/sqlite/sqlite-delivery-queue';
import { SqliteWebhookDeliveryStatus } from '../../src/delivery/status/webhook-delivery-status.sqlite';
import { newEndpointRow, EndpointEntity } from '../../src/delivery/endpoint.entity';
import { testDatabases } from '../support/databases';
import { databaseFixture, uniqueName } from './store-fixture';

/** How long the other connection keeps the write lock, and so how long the queue must wait for it. */
const HOLD_MS = 300;

/**
 * The other connection (another process in production: the API next to the worker): its own
 * better-sqlite3 handle on the file, in a thread. Told through `flag` (1), it takes the write lock
 * (BEGIN IMMEDIATE), writes a customer row, says so (2) and commits HOLD_MS later. Plain JavaScript
 * evaluated as the worker's source; better-sqlite3 is required by the path this process resolved.
 */
const HOLDER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true, timeout: 2000 });
const flag = new Int32Array(workerData.flag);
parentPort.postMessage('ready');
Atomics.wait(flag, 0, 0);
db.exec('BEGIN IMMEDIATE');
db.prepare('INSERT INTO customers (id, name, plan, created_at) VALUES (?, ?, ?, ?)').run(workerData.customerId, workerData.customerId, 'business', Date.now());
Atomics.store(flag, 0, 2);
Atomics.notify(flag, 0);
setTimeout(() => {
  db.exec('COMMIT');
  db.close();
  parentPort.postMessage('committed');
}, workerData.holdMs);
`;

interface LockHolder {
  /** Synchronous: returns once the other connection holds the write lock with its write pending. */
  hold(): void;
  /** Settles when it committed. */
  readonly committed: Promise<void>;
  /** The customer it inserts. */
  readonly customerId: string;
}

async function lockHolder(file: string): Promise<LockHolder> {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const customerId = newId('cus');
  const worker = new Worker(HOLDER_SOURCE, { eval: true, workerData: { driver: require.resolve('better-sqlite3'), file, flag: flag.buffer, customerId, holdMs: HOLD_MS } });
  const committed = new Promise<void>((resolve, reject) => {
    worker.on('message', (m) => m === 'committed' && resolve());
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`lock holder exited (${code}) before committing`)));
  });
  committed.catch(() => undefined); // a test that fails earlier must not also leave an unhandled rejection
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  return {
    hold() {
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
      if (Atomics.wait(flag, 0, 1, 5000) === 'timed-out') throw new Error('the lock holder never took the write lock');
    },
    committed,
    customerId,
  };
}

/**
 * SQLite only: the write lock between two connections to one file (WAL) has no PostgreSQL
 * counterpart. A deferred transaction that reads first and then writes fails at once with
 * SQLITE_BUSY (no busy wait) while another connection holds the write lock; the queue's write
 * transactions begin IMMEDIATE, so they wait for it (up to the busy timeout) instead.
 */
describe.each(testDatabases().filter(([name]) => name === 'sqlite'))('SQLite queue writes while another connection holds the write lock (%s)', (_name, makeDb) => {
  const db = databaseFixture(makeDb);
  let queue: SqliteDeliveryQueue;
  const NOW = new Date(Date.UTC(2025, 0, 1));
  let ms = NOW.getTime() - 60_000;

  beforeAll(() => {
    queue = new SqliteDeliveryQueue(db.ds, new SqliteWebhookDeliveryStatus(db.ds));
  });

  const file = () => db.ds.options.database as string;

  async function customer(): Promise<string> {
    const id = newId('cus');
    await db.ds.getRepository(CustomerEntity).insert({ id, name: uniqueName('cust', 200), plan: 'business', privateAllow: null, createdAt: NOW });
    return id;
  }

  /** An endpoint (the delivery core's half of a webhook: the fan-out is handed its id). */
  function webhook(customerId: string): EndpointEntity {
    return newEndpointRow({
      id: newUlid(ms++), customerId, url: 'https://example.com/hook', allowNonstandardPort: false,
      secret: 'enc:secret', createdAt: new Date(NOW.getTime() - 60_000),
    });
  }

  const event = (subreddit: string) => ({ id: `evt_${newUlid()}`, type: 'trends.rising', subreddit, payload: '{}', createdAt: NOW });

  async function customerExists(id: string): Promise<boolean> {
    return (await db.ds.getRepository(CustomerEntity).countBy({ id })) === 1;
  }

  it('claimDue (expired leases read, then the claim) waits for the lock and claims', async () => {
    const c = await customer();
    const w = webhook(c);
    await db.ds.getRepository(EndpointEntity).insert(w);
    const e = event(uniqueName('claim'));
    await queue.insertEventWithDeliveries(e, [{ id: w.id, customerId: c }], (id) => deliveryId(e.id, id), NOW);

    const other = await lockHolder(file());
    other.hold();
    const t0 = performance.now();
    const claimed = await queue.claimDue('worker-1', NOW, new Date(NOW.getTime() + 30_000), 10);
    const waited = performance.now() - t0;

    expect(claimed.map((d) => d.id)).toEqual([deliveryId(e.id, w.id)]);
    // It waited for the other connection's commit rather than failing or reading around it.
    expect(waited).toBeGreaterThanOrEqual(HOLD_MS / 2);
    await other.committed;
    expect(await customerExists(other.customerId)).toBe(true);
  });

  it("a fan-out's later slices (endpoints read, then deliveries inserted) wait for the lock and finish", async () => {
    // More subscribers than the first slice takes (FAN_OUT_FIRST_ROWS, 512): at least one more slice.
    const c = await customer();
    const subreddit = uniqueName('fan');
    const hooks = Array.from({ length: 700 }, () => webhook(c));
    for (let i = 0; i < hooks.length; i += 100) await db.ds.getRepository(EndpointEntity).insert(hooks.slice(i, i + 100));
    const e = event(subreddit);

    const other = await lockHolder(file());
    // The lock is taken where the fan-out yields after its first slice (its first setImmediate),
    // so the second slice's transaction begins while the other connection holds it.
    const original = global.setImmediate;
    let tookAt: number | undefined;
    const spy = jest.spyOn(global, 'setImmediate').mockImplementation(((cb: (...a: unknown[]) => void, ...args: unknown[]) => {
      if (tookAt === undefined) {
        other.hold();
        tookAt = performance.now();
      }
      return original(cb, ...args);
    }) as typeof setImmediate);
    let r: { created: boolean; deliveries: number };
    try {
      r = await queue.insertEventWithDeliveries(e, hooks, (id) => deliveryId(e.id, id), NOW);
    } finally {
      spy.mockRestore();
    }
    const waited = performance.now() - tookAt!;

    expect(tookAt).toBeDefined();
    expect(r).toEqual({ created: true, deliveries: hooks.length });
    expect(waited).toBeGreaterThanOrEqual(HOLD_MS / 2);
    await other.committed;
    expect(await customerExists(other.customerId)).toBe(true);
    const [{ n }] = (await db.ds.query('SELECT COUNT(*) AS n FROM deliveries WHERE event_id = ?', [e.id])) as { n: number }[];
    expect(Number(n)).toBe(hooks.length);
  });
  it('the failure count (clocks read, then written) waits for the lock and counts', async () => {
    const c = await customer();
    const w = { ...webhook(c), failingSince: new Date(NOW.getTime() - 60_000) };
    await db.ds.getRepository(EndpointEntity).insert(w);
    const status = new SqliteWebhookDeliveryStatus(db.ds);

    const other = await lockHolder(file());
    other.hold();
    const t0 = performance.now();
    const disabled = await status.recordFailures([{ webhookId: w.id, at: NOW, gone: false }], 5 * 86_400_000, NOW);
    const waited = performance.now() - t0;

    expect(disabled).toEqual([]);
    expect(waited).toBeGreaterThanOrEqual(HOLD_MS / 2);
    await other.committed;
    const row = await db.ds.getRepository(EndpointEntity).findOneByOrFail({ id: w.id });
    expect(row).toMatchObject({ failurePeriods: 1, lastFailurePeriod: 0 });
  });
});
