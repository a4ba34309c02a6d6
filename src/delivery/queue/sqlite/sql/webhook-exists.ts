/** A JSON array of webhook ids: those of them that exist and are not disabled. */
export const WEBHOOKS_EXIST = 'SELECT id FROM webhooks WHERE id IN (SELECT value FROM json_each(?)) AND disabled_at IS NULL';
