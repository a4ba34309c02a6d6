/** id, event id, webhook id, customer id, then now (ms) three times; changes nothing for a delivery that exists. */
export const INSERT_DELIVERY = `INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, next_attempt_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, 'pending', 0, ?, ?, ?) ON CONFLICT DO NOTHING`;

/**
 * Delivery id, event id, next attempt at, created at, updated at (ms), endpoint id, created-at
 * bound (ms): a fan-out's pending delivery to that endpoint, with the endpoint's owner, unless the
 * endpoint is disabled, gone, or newer than the bound (a resumed fan-out reaches only the
 * endpoints that existed when it started); changes nothing when the delivery exists.
 */
export const INSERT_FAN_OUT_DELIVERY = `INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, next_attempt_at, created_at, updated_at)
         SELECT ?, ?, w.id, w.customer_id, 'pending', 0, ?, ?, ? FROM webhooks w WHERE w.id = ? AND w.disabled_at IS NULL AND w.created_at <= ?
         ON CONFLICT DO NOTHING`;
