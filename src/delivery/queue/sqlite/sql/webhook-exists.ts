/** Webhook id; a row when it exists. */
export const WEBHOOK_EXISTS = 'SELECT 1 FROM webhooks WHERE id = ?';
