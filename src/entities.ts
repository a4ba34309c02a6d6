import { API_KEY_ENTITIES } from './auth/entities';
import type { HostSchema } from './database/data-source';
import { resolveFeatures, type TrendhooksFeatures } from './database/features';
import { DELIVERY_ENTITIES } from './delivery/entities';
import { PORTAL_ENTITIES } from './portal/entities';
import { POST_ENTITIES } from './posts/entities';
import { SETTINGS_ENTITIES } from './settings/entities';
import { TREND_ENTITIES } from './trends/entities';
import { WEBHOOK_ENTITIES } from './webhooks/entities';

/** Always needed: `webhooks`, `events`, `deliveries`, `delivery_attempts`, `portal_sessions`. */
export const TRENDHOOKS_CORE_ENTITIES = [...new Set([...WEBHOOK_ENTITIES, ...DELIVERY_ENTITIES, ...PORTAL_ENTITIES])];
/** The `apiKeys` feature: `customers`, `api_keys`. */
export const TRENDHOOKS_API_KEY_ENTITIES = [...API_KEY_ENTITIES];
/** The `settings` feature: `settings` (the generated cursor secret). */
export const TRENDHOOKS_SETTINGS_ENTITIES = [...SETTINGS_ENTITIES];
/** The `posts` feature: `posts`, `trend_sources`. */
export const TRENDHOOKS_POST_ENTITIES = [...POST_ENTITIES, ...TREND_ENTITIES];

/**
 * Every entity trendhooks owns, gathered here from each module's own list so database/ knows none
 * of them; the standalone app maps them all.
 */
// A table two modules use (webhooks: the API's and delivery's) is listed once.
export const TRENDHOOKS_ENTITIES = [...new Set([...API_KEY_ENTITIES, ...WEBHOOK_ENTITIES, ...SETTINGS_ENTITIES, ...POST_ENTITIES, ...DELIVERY_ENTITIES, ...TREND_ENTITIES, ...PORTAL_ENTITIES])];
/**
 * The entities a host lists on its own DataSource: core plus the features switched on (all by
 * default), matching trendhooksMigrations(dialect, features).
 */
export function trendhooksEntities(features: TrendhooksFeatures = {}) {
  const f = resolveFeatures(features);
  return [
    ...TRENDHOOKS_CORE_ENTITIES,
    ...(f.apiKeys ? TRENDHOOKS_API_KEY_ENTITIES : []),
    ...(f.settings ? TRENDHOOKS_SETTINGS_ENTITIES : []),
    ...(f.posts ? TRENDHOOKS_POST_ENTITIES : []),
  ];
}

/** The entities of one configuration: a host schema's features, or all of them (the standalone). */
export function entitiesFor(host: HostSchema | null) {
  return host ? trendhooksEntities(host.features) : TRENDHOOKS_ENTITIES;
}
