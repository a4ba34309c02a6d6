/** Event kind, subreddit: the webhooks a trend event fans out to. */
export const SUBSCRIBERS = 'SELECT id, customer_id FROM webhooks WHERE event = ? AND subreddit = ?';
