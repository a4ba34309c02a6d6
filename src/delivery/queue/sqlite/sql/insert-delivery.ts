/** id, event id, webhook id, customer id, then now (ms) three times; changes nothing for a delivery that exists. */
export const INSERT_DELIVERY = `INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, next_attempt_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, 'pending', 0, ?, ?, ?) ON CONFLICT DO NOTHING`;
