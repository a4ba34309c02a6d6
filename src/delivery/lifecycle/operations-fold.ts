import { FoldedDisables, webhookDisabledBody, WebhookDisabledEvent } from '../../events/webhook-disabled';
import type { OperationsNotificationEntity } from './operations-notification.entity';

/**
 * When a webhook's new notification may go out: at once, unless the webhook had one in the last
 * `intervalMs`, then an `intervalMs` after that one's slot. Disables until then fold into it.
 */
export function notificationSlot(latestSlotAt: Date | null, now: Date, intervalMs: number): Date {
  if (!latestSlotAt) return now;
  return new Date(Math.max(now.getTime(), latestSlotAt.getTime() + intervalMs));
}

/** The body of a stored notification: its latest disable, and the earlier ones folded into it. */
export function notificationBody(row: Pick<OperationsNotificationEntity, 'event' | 'disables' | 'goneCount' | 'failingCount' | 'firstDisabledAt'>): string {
  const event = JSON.parse(row.event) as WebhookDisabledEvent;
  if (row.disables <= 1) return webhookDisabledBody(event);
  const folded: FoldedDisables = {
    count: row.disables - 1,
    first_disabled_at: row.firstDisabledAt.toISOString(),
    gone: row.goneCount - (event.reason === 'gone' ? 1 : 0),
    failing: row.failingCount - (event.reason === 'failing' ? 1 : 0),
  };
  return webhookDisabledBody(event, folded);
}
