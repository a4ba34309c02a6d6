import { randomBytes } from 'node:crypto';
import { isTestEventId } from '../events/catalogue';

export interface DeliveryEvent {
  id: string;
  type: string;
  subreddit: string;
  createdAt: Date;
  /** The event's figures (scores, counts…), copied into `data` after the reserved keys. */
  data: Record<string, unknown>;
}

/** Keys of `data` that identify the delivery (and mark a test); an event's own figures may never replace them. */
export const RESERVED_DATA_KEYS = ['event_id', 'webhook_id', 'subreddit', 'test'] as const;
const RESERVED = new Set<string>(RESERVED_DATA_KEYS);

/**
 * The exact request body: `{"type", "timestamp", "data": {event_id, webhook_id, subreddit,
 * [test,] ...figures}}`, `test: true` only on a test event (its id says so). Built once per
 * delivery and signed as is, so key order is fixed here (JSON objects keep insertion order) and
 * the same event always serialises to the same bytes.
 */
export function buildDeliveryBody(event: DeliveryEvent, webhookId: string): string {
  if (!(event.createdAt instanceof Date) || Number.isNaN(event.createdAt.getTime())) {
    throw new Error('event.createdAt must be a valid Date');
  }
  const data: Record<string, unknown> = {
    event_id: event.id,
    webhook_id: webhookId,
    subreddit: event.subreddit,
  };
  if (isTestEventId(event.id)) data.test = true;
  for (const [key, value] of Object.entries(event.data ?? {})) {
    if (RESERVED.has(key)) continue;
    // defineProperty, not assignment, for "__proto__": it stays a plain key. Plain assignment
    // otherwise, as defineProperty is several times slower on this per-delivery path.
    if (key === '__proto__') Object.defineProperty(data, key, { value, enumerable: true, writable: true, configurable: true });
    else data[key] = value;
  }
  return JSON.stringify({
    type: event.type,
    timestamp: event.createdAt.toISOString(),
    data,
  });
}

/**
 * `buildDeliveryBody` for many webhooks of one event: the body is built once around a marker and
 * each call splices the webhook id in, so a fanned-out event is not re-serialised per delivery.
 * JSON.stringify of a string does not depend on where it sits, so the result is byte-identical
 * to `buildDeliveryBody(event, webhookId)` (the unit tests hold it to that).
 */
export function deliveryBodyTemplate(event: DeliveryEvent): (webhookId: string) => string {
  const marker = `\u0000wh${randomBytes(12).toString('hex')}`;
  const body = buildDeliveryBody(event, marker);
  const at = body.indexOf(JSON.stringify(marker));
  const before = body.slice(0, at);
  const after = body.slice(at + JSON.stringify(marker).length);
  return (webhookId) => before + JSON.stringify(webhookId) + after;
}
