/** $1 event kind, $2 subreddit: the webhooks a trend event fans out to. */
export const SUBSCRIBERS = 'SELECT id, customer_id FROM webhooks WHERE event = $1 AND subreddit = $2';
