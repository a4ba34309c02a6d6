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
export const TRENDHOOKS_ENTITIES = [...API_KEY_ENTITIES, ...WEBHOOK_ENTITIES, ...PAGINATION_ENTITIES, ...POST_ENTITIES, ...DELIVERY_ENTITIES, ...TREND_ENTITIES];
