export interface DeliveryEvent {
  id: string;
  type: string;
  subreddit: string;
  createdAt: Date;
  /** The event's figures (scores, counts…), copied into `data` after the reserved keys. */
  data: Record<string, unknown>;
}

/** Keys of `data` that identify the delivery; an event's own figures may never replace them. */
export const RESERVED_DATA_KEYS = ['event_id', 'webhook_id', 'subreddit'] as const;
const RESERVED = new Set<string>(RESERVED_DATA_KEYS);

/**
 * The exact request body: `{"type", "timestamp", "data": {event_id, webhook_id, subreddit,
 * ...figures}}`. Built once per delivery and signed as is, so key order is fixed here (JSON
 * objects keep insertion order) and the same event always serialises to the same bytes.
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
  for (const [key, value] of Object.entries(event.data ?? {})) {
    if (RESERVED.has(key)) continue;
    // defineProperty, not assignment: a figure named "__proto__" stays a plain key.
    Object.defineProperty(data, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return JSON.stringify({
    type: event.type,
    timestamp: event.createdAt.toISOString(),
    data,
  });
}
