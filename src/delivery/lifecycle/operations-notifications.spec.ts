import type { WebhookDisabledEvent } from '../../events/webhook-disabled';
import { notificationBody, notificationSlot } from './operations-fold';

const LATEST: WebhookDisabledEvent = { id: '01KJSX4M8G0000000000000001', customer_id: 'cus_1', url: 'https://hooks.test/in', reason: 'failing', disabled_at: '2026-03-08T13:05:00.000Z' };

describe('notificationBody', () => {
  it('is the plain webhook.disabled body when the notification stands for one disable', () => {
    const body = notificationBody({ event: JSON.stringify(LATEST), disables: 1, goneCount: 0, failingCount: 1, firstDisabledAt: new Date(LATEST.disabled_at) });
    expect(JSON.parse(body)).toEqual({ type: 'webhook.disabled', timestamp: LATEST.disabled_at, data: LATEST });
  });

  it('reports the latest disable and folds the earlier ones, counted by reason without the latest', () => {
    const body = notificationBody({ event: JSON.stringify(LATEST), disables: 5, goneCount: 3, failingCount: 2, firstDisabledAt: new Date('2026-03-08T12:10:00.000Z') });
    expect(JSON.parse(body).data).toEqual({ ...LATEST, folded: { count: 4, first_disabled_at: '2026-03-08T12:10:00.000Z', gone: 3, failing: 1 } });
  });
});

describe('notificationSlot', () => {
  const HOUR = 3_600_000;
  const now = new Date('2026-03-08T13:05:00.000Z');

  it('is now for a webhook never notified', () => {
    expect(notificationSlot(null, now, HOUR)).toEqual(now);
  });

  it('is an hour after the last slot while that hour runs, so the disables until then fold into one', () => {
    const last = new Date(now.getTime() - 10 * 60_000);
    expect(notificationSlot(last, now, HOUR)).toEqual(new Date(last.getTime() + HOUR));
  });

  it('is now once the hour since the last slot has passed', () => {
    expect(notificationSlot(new Date(now.getTime() - HOUR), now, HOUR)).toEqual(now);
    expect(notificationSlot(new Date(now.getTime() - 5 * HOUR), now, HOUR)).toEqual(now);
  });

  it('is now with an interval of 0 (every disable its own notification)', () => {
    expect(notificationSlot(now, now, 0)).toEqual(now);
  });
});
