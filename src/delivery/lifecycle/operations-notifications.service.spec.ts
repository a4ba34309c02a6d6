import { Logger } from '@nestjs/common';
import type { DeliveryModuleOptions } from '../delivery.options';
import type { OperationsNotificationStore } from './operations-notification.store';
import { OperationsNotifications } from './operations-notifications';
import type { WebhookDisabledEvent } from '../../events/webhook-disabled';

const EVENT: WebhookDisabledEvent = { id: '01KJSX4M8G0000000000000001', customer_id: 'cus_1', url: 'https://hooks.test/in', reason: 'gone', disabled_at: '2026-03-08T13:05:00.000Z' };
const OPS = { url: 'https://ops.test/in', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };

function fakeStore() {
  return { raise: jest.fn(async () => 'queued' as const), claimDue: jest.fn(async () => []), pruneSent: jest.fn(async () => 0), markSent: jest.fn(), markFailed: jest.fn() };
}

describe('OperationsNotifications', () => {
  const clock = { now: () => new Date('2026-03-08T13:05:00.000Z') };
  let service: OperationsNotifications | undefined;
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(new Logger()));
  beforeEach(() => jest.useFakeTimers());
  afterEach(async () => {
    jest.useRealTimers();
    await service?.onApplicationShutdown();
    service = undefined;
  });

  const make = (store: ReturnType<typeof fakeStore>, options: DeliveryModuleOptions) =>
    (service = new OperationsNotifications(store as unknown as OperationsNotificationStore, clock, options));

  it('does nothing without `operations` (a host that did not ask for it): no row, no timer, no query', async () => {
    const store = fakeStore();
    const s = make(store, {});
    s.onApplicationBootstrap();
    await s.raise(EVENT);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(s.enabled).toBe(false);
    expect(store.raise).not.toHaveBeenCalled();
    expect(store.claimDue).not.toHaveBeenCalled();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('stores disables but sends nothing in a process that is no worker', async () => {
    const store = fakeStore();
    const s = make(store, { operations: OPS, worker: false });
    s.onApplicationBootstrap();
    await s.raise(EVENT);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(store.raise).toHaveBeenCalledTimes(1);
    expect(store.claimDue).not.toHaveBeenCalled();
  });

  it('looks for due rows at start and then every 5 s, not at the delivery poll interval', async () => {
    const store = fakeStore();
    const s = make(store, { operations: OPS, pollIntervalMs: 50 });
    s.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(0);
    expect(store.claimDue).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(4_999);
    expect(store.claimDue).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(store.claimDue).toHaveBeenCalledTimes(2);
    // A new row wakes it at once.
    await s.raise(EVENT);
    await jest.advanceTimersByTimeAsync(0);
    expect(store.claimDue).toHaveBeenCalledTimes(3);
    // Pruning at most once an hour.
    expect(store.pruneSent).toHaveBeenCalledTimes(1);
  });
});

describe('OperationsNotifications, a row whose senders keep dying', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(new Logger()));

  it('ends failed, unsent, when claimed again after its last attempt', async () => {
    const store = fakeStore();
    // Three retries, so four attempts: a fifth claim means the fourth attempt's sender died.
    const row = { id: 'msg_x', webhookId: EVENT.id, attempts: 5, event: JSON.stringify(EVENT), disables: 1, goneCount: 1, failingCount: 0, firstDisabledAt: new Date(EVENT.disabled_at) };
    store.claimDue.mockResolvedValueOnce([row] as never);
    const s = new OperationsNotifications(store as unknown as OperationsNotificationStore, { now: () => new Date(EVENT.disabled_at) }, { operations: { url: 'http://127.0.0.1:1/never', secret: OPS.secret }, retryScheduleSeconds: [1, 1, 1] });
    s.onApplicationBootstrap();
    await new Promise((r) => setTimeout(r, 100));
    await s.onApplicationShutdown();
    expect(store.markFailed).toHaveBeenCalledWith('msg_x', expect.any(String), expect.any(Date), expect.stringMatching(/^sender_lost/), null);
  });
});
