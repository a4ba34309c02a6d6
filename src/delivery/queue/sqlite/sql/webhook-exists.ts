/** A JSON array of webhook ids: those of them that exist. */
export const WEBHOOKS_EXIST = 'SELECT id FROM webhooks WHERE id IN (SELECT value FROM json_each(?))';
