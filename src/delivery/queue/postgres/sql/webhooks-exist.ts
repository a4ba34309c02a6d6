import type { PreparedStatement } from './statement';

/** $1: webhook ids; answers those that exist and are not disabled (one query for every pre-send check in flight). */
export const WEBHOOKS_EXIST: PreparedStatement = {
  name: 'trendhooks_webhooks_exist',
  text: 'SELECT id FROM webhooks WHERE id = ANY($1::varchar[]) AND disabled_at IS NULL',
};
