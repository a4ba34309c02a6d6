/** id, type, subreddit, payload, created at (ms); changes nothing when the event exists. */
export const INSERT_EVENT = 'INSERT INTO events (id, type, subreddit, payload, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING';
