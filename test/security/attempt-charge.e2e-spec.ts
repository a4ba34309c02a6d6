import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { newUlid } from '../../src/common/ids';
import { deliveryId } from '../../src/delivery/delivery-id';
import { DeliveryQueue } from '../../src/delivery/queue/delivery-queue';
import { testDatabases } from '../support/databases';
import { startTestApp, TestApp } from '../support/app';

const LEASE_MS = 60_000;

/**
 * The claim statement charges the attempt (issue #12), on both databases: what the worker relies
 * on to end a delivery that kills it. Driven through the repository on a real database, with no
 * worker running (role api), so the test owns every claim.
 */
describe.each(testDatabases())('attempts charged at claim, on %s', (name, makeDb) => {
  let t: TestApp;
  let repo: DeliveryQueue;
  let ds: DataSource;

  beforeAll(async () => {
    t = await startTestApp(makeDb(), { role: 'api' });
    repo = t.app.get(DeliveryQueue);
    ds = t.app.get<DataSource>(getDataSourceToken());
  });
  afterAll(async () => {
    await t?.close();
  });

  const row = async (id: string) => {
    const [r] = (await ds.query(`SELECT state, attempts, lease_owner, next_attempt_at FROM deliveries WHERE id = ${name === 'postgres' ? '$1' : '?'}`, [id])) as {
      state: string;
      attempts: number | string;
      lease_owner: string | null;
      next_attempt_at: number | string | null;
    }[];
    return { state: r.state, attempts: Number(r.attempts), leaseOwner: r.lease_owner, nextAttemptAt: r.next_attempt_at === null ? null : Number(r.next_attempt_at) };
  };

  /** One pending delivery of a fresh event to a webhook that exists, due at `at`. */
  async function queued(at: number): Promise<string> {
    const c = await t.customer();
    const w = await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/in', event: 'trends.rising', subreddit: `charge${newUlid().slice(-8).toLowerCase()}` });
    expect(w.status).toBe(201);
    const event = { id: `evt_${newUlid()}`, type: 'trends.rising', subreddit: 'x', payload: '{}', createdAt: new Date(at) };
    await repo.insertEventWithDeliveries(event, [{ id: w.body.data.id, customerId: c.customerId }], (webhookId) => deliveryId(event.id, webhookId), new Date(at));
    return deliveryId(event.id, w.body.data.id);
  }

  // Claims far in the future, one row each: earlier suites' leftovers cannot be due before these.
  let clock = Date.now() + 10 * 365 * 86_400_000;
  const claimOne = async (owner: string) => {
    clock += 1000;
    const now = new Date(clock);
    return repo.claimDue(owner, now, new Date(clock + LEASE_MS), 1);
  };

  it('charges each claim, and tells a takeover when the dead worker claimed the row', async () => {
    const id = await queued(clock);
    const [first] = await claimOne('worker-a');
    expect(first).toMatchObject({ id, attempts: 1, lostSince: null });
    const claimedAt = clock;
    expect(await row(id)).toMatchObject({ state: 'delivering', attempts: 1, leaseOwner: 'worker-a' });

    clock += LEASE_MS; // worker-a died: its lease runs out
    const [second] = await claimOne('worker-b');
    expect(second).toMatchObject({ id, attempts: 2, lostSince: new Date(claimedAt) });
    expect(await row(id)).toMatchObject({ state: 'delivering', attempts: 2, leaseOwner: 'worker-b' });
  });

  it('gives the charge back when the claim ends without an attempt (a cancelled claim; a claim released unstarted)', async () => {
    const cancelled = await queued(clock);
    const [c] = await claimOne('worker-c');
    expect(c).toMatchObject({ id: cancelled, attempts: 1 });
    await repo.cancelClaimed(c, 'worker-c', new Date(clock));
    expect(await row(cancelled)).toMatchObject({ state: 'cancelled', attempts: 0 });

    const released = await queued(clock);
    const [r] = await claimOne('worker-d');
    expect(r).toMatchObject({ id: released, attempts: 1 });
    await repo.releaseLeases('worker-d', [released], new Date(clock), 'unstarted');
    expect(await row(released)).toMatchObject({ state: 'pending', attempts: 0, leaseOwner: null, nextAttemptAt: clock });
    // Due again at once, and charged afresh; cancelled so that it leaves nothing due behind.
    const [again] = await claimOne('worker-d2');
    expect(again).toMatchObject({ id: released, attempts: 1, lostSince: null });
    await repo.cancelClaimed(again, 'worker-d2', new Date(clock));
  });

  it('keeps the charge of an attempt still in flight at shutdown, its lease ending at once', async () => {
    const id = await queued(clock);
    await claimOne('worker-e');
    const claimedAt = clock;
    await repo.releaseLeases('worker-e', [id], new Date(clock), 'in_flight');
    expect(await row(id)).toMatchObject({ state: 'delivering', attempts: 1, leaseOwner: 'worker-e', nextAttemptAt: clock });
    const [next] = await claimOne('worker-f');
    expect(next).toMatchObject({ id, attempts: 2, lostSince: new Date(claimedAt) });
  });
});
