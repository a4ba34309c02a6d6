import { API_KEY_ENTITIES } from './auth/entities';
import { DELIVERY_ENTITIES } from './delivery/entities';
import { PAGINATION_ENTITIES } from './pagination/entities';
import { POST_ENTITIES } from './posts/entities';
import { TREND_ENTITIES } from './trends/entities';
import { WEBHOOK_ENTITIES } from './webhooks/entities';

/**
 * Every entity trendhooks owns, gathered here from each module's own list so database/ knows none
 * of them; a host app adds these to its own TypeORM connection.
 */
// A table two modules use (webhooks: the API's and delivery's) is listed once.
export const TRENDHOOKS_ENTITIES = [...new Set([...API_KEY_ENTITIES, ...WEBHOOK_ENTITIES, ...PAGINATION_ENTITIES, ...POST_ENTITIES, ...DELIVERY_ENTITIES, ...TREND_ENTITIES])];
