/**
 * Event kind, subreddit, rowid cursor, created-at bound (ms), page size: the next page of the
 * webhooks a trend event fans out to, in rowid order (the (event, subreddit) index holds the rowid,
 * so each page is a range of it). Created-at bound: only webhooks that existed by then. Disabled
 * webhooks get no delivery (the event is still stored, for recovery).
 */
export const SUBSCRIBERS_PAGE = `SELECT rowid AS rid, id, customer_id FROM webhooks
         WHERE event = ? AND subreddit = ? AND rowid > ? AND created_at <= ? AND disabled_at IS NULL ORDER BY rowid LIMIT ?`;

/** Event kind, subreddit, created-at bound (ms): the id of the last subscriber in rowid order that existed by then. */
export const LAST_SUBSCRIBER = `SELECT id FROM webhooks WHERE event = ? AND subreddit = ? AND created_at <= ? AND disabled_at IS NULL ORDER BY rowid DESC LIMIT 1`;
