/** $1 id, $2 type, $3 subreddit, $4 payload, $5 created at (ms); answers a row only when the event is new. */
export const INSERT_EVENT = 'INSERT INTO events (id, type, subreddit, payload, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING RETURNING id';
