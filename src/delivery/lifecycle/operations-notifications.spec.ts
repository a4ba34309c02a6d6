import type { WebhookDisabledEvent } from '../../events/webhook-disabled';
import { notificationBody } from './operations-notifications';

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
