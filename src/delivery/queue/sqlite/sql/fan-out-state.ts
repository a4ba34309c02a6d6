/** Event id: when its fan-out started (the created_at of any of its deliveries), none without deliveries. Reads idx_deliveries_event. */
export const FAN_OUT_AT = 'SELECT created_at FROM deliveries WHERE event_id = ? LIMIT 1';

/** Delivery id (derived from the event and the webhook, deliveryId): whether that delivery exists. */
export const DELIVERY_EXISTS = 'SELECT 1 FROM deliveries WHERE id = ?';

/** Event id: whether the event is stored. */
export const EVENT_EXISTS = 'SELECT 1 FROM events WHERE id = ?';
