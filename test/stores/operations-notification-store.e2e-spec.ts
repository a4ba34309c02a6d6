import { ulid } from 'ulid';
import type { WebhookDisabledEvent } from '../../src/events/webhook-disabled';
import { OperationsNotificationStore } from '../../src/delivery/lifecycle/operations-notification.store';
import { testDatabases } from '../support/databases';
import { storeFixture } from './store-fixture';

const HOUR = 3_600_000;

/**
 * The operators' notifications on each database: disables fold into a webhook's notification not
 * yet tried, a new one waits for the webhook's next hour, one process at a time holds a row under
 * its lease, a dead process's row is taken over, and sent rows are pruned.
 */
describe.each(testDatabases())('OperationsNotificationStore on %s', (_name, makeDb) => {
  const f = storeFixture(makeDb, { sqlite: OperationsNotificationStore, postgres: OperationsNotificationStore });
  const T0 = new Date('2026-03-08T12:00:00.000Z');
  const at = (ms: number) => new Date(T0.getTime() + ms);
  const event = (id: string, ms: number, reason: 'gone' | 'failing' = 'gone'): WebhookDisabledEvent => ({ id, customer_id: 'cus_ops', url: 'https://hooks.test/in', reason, disabled_at: at(ms).toISOString() });

  it('folds disables into the notification not yet tried, counted by reason, keeping the first and the latest', async () => {
    const id = ulid();
    expect(await f.store.raise(event(id, 0), at(0), HOUR)).toBe('queued');
    expect(await f.store.raise(event(id, 1000, 'failing'), at(1000), HOUR)).toBe('folded');
    expect(await f.store.raise(event(id, 2000), at(2000), HOUR)).toBe('folded');
    const [row, ...rest] = await f.store.forWebhook(id);
    expect(rest).toEqual([]);
    expect(row).toMatchObject({ state: 'pending', attempts: 0, disables: 3, goneCount: 2, failingCount: 1, firstDisabledAt: at(0), slotAt: at(0), nextAttemptAt: at(0) });
    expect(JSON.parse(row.event)).toEqual(event(id, 2000));
  });

  it('after a sent notification, the next waits for the hour under an id of its own, and keeps one open row', async () => {
    const id = ulid();
    await f.store.raise(event(id, 0), at(0), HOUR);
    const [claimed] = await f.store.claimDue('p1', at(0), at(15_000), 8).then((rows) => rows.filter((r) => r.webhookId === id));
    await f.store.markSent(claimed.id, 'p1', at(100));
    for (let i = 1; i <= 5; i++) await f.store.raise(event(id, i * 1000), at(i * 1000), HOUR);
    const rows = await f.store.forWebhook(id);
    expect(rows.map((r) => [r.state, r.disables])).toEqual([['sent', 1], ['pending', 5]]);
    expect(rows[1].slotAt).toEqual(at(HOUR));
    expect(rows[1].id).not.toBe(rows[0].id);
    // Not due before its hour.
    expect((await f.store.claimDue('p1', at(HOUR - 1), at(HOUR + 15_000), 8)).filter((r) => r.webhookId === id)).toEqual([]);
    // A second open row for the webhook is refused by the database itself.
    await expect(f.ds.query(`INSERT INTO operations_notifications (id, webhook_id, customer_id, state, slot_at, next_attempt_at, attempts, event, disables, gone_count, failing_count, first_disabled_at, created_at, updated_at) VALUES ('msg_dup', '${id}', 'cus_ops', 'pending', 0, 0, 0, '{}', 1, 1, 0, 0, 0, 0)`)).rejects.toThrow();
  });

  it('leases a due row to one process; another takes it over only once the lease has expired, and the first can no longer settle it', async () => {
    const id = ulid();
    await f.store.raise(event(id, 0), at(0), HOUR);
    const mine = <T extends { webhookId: string }>(rows: T[]) => rows.filter((r) => r.webhookId === id);
    const [a, b] = await Promise.all([f.store.claimDue('p1', at(10), at(5_000), 8), f.store.claimDue('p2', at(10), at(5_000), 8)]);
    expect(mine(a).length + mine(b).length).toBe(1);
    const [holder, other] = mine(a).length ? ['p1', 'p2'] : ['p2', 'p1'];
    expect(mine(await f.store.claimDue(other, at(4_999), at(9_999), 8))).toEqual([]);
    const [taken] = mine(await f.store.claimDue(other, at(5_000), at(20_000), 8));
    expect(taken).toMatchObject({ leaseOwner: other, attempts: 2 });
    await f.store.markSent(taken.id, holder, at(5_001));
    expect((await f.store.forWebhook(id))[0].state).toBe('sending');
    await f.store.markFailed(taken.id, other, at(5_002), 'HTTP 503', at(6_000));
    expect((await f.store.forWebhook(id))[0]).toMatchObject({ state: 'pending', nextAttemptAt: at(6_000), lastError: 'HTTP 503', leaseOwner: null });
    // A row in its retries is no longer open: a new disable gets a row of its own for the next hour.
    expect(await f.store.raise(event(id, 7_000), at(7_000), HOUR)).toBe('queued');
    const [claimed] = mine(await f.store.claimDue(other, at(6_000), at(20_000), 8));
    await f.store.markFailed(claimed.id, other, at(6_001), 'HTTP 500', null);
    expect((await f.store.forWebhook(id)).map((r) => r.state)).toEqual(['failed', 'pending']);
  });

  it('prunes sent rows older than the cut-off, and nothing else', async () => {
    const [old, recent, failing] = [ulid(), ulid(), ulid()];
    for (const id of [old, recent, failing]) await f.store.raise(event(id, 0), at(0), HOUR);
    const rows = (await f.store.claimDue('p1', at(0), at(15_000), 100)).filter((r) => [old, recent, failing].includes(r.webhookId));
    const byHook = new Map(rows.map((r) => [r.webhookId, r.id]));
    await f.store.markSent(byHook.get(old)!, 'p1', at(1_000));
    await f.store.markSent(byHook.get(recent)!, 'p1', at(3_000));
    await f.store.markFailed(byHook.get(failing)!, 'p1', at(1_000), 'HTTP 500', null);
    expect(await f.store.pruneSent(at(2_000))).toBeGreaterThanOrEqual(1);
    expect(await f.store.forWebhook(old)).toEqual([]);
    expect((await f.store.forWebhook(recent)).map((r) => r.state)).toEqual(['sent']);
    expect((await f.store.forWebhook(failing)).map((r) => r.state)).toEqual(['failed']);
  });
});
