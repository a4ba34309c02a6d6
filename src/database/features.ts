import type { MigrationInterface } from 'typeorm';
import { assertDialect, type Dialect } from './dialect';
import { POSTGRES_FEATURE_MIGRATIONS } from './migrations/postgres';
import { SQLITE_FEATURE_MIGRATIONS } from './migrations/sqlite';

/**
 * The optional parts of trendhooks' schema a host picks; core (webhooks, webhook_subscriptions,
 * events, deliveries, delivery_attempts, destination_circuits) is always there. All default to true.
 *   apiKeys  — `customers`, `api_keys` (AuthModule's API keys)
 *   settings — `settings` (PaginationModule's generated cursor secret when none is configured)
 *   posts    — `posts`, `trend_sources` (PostsModule, TrendsModule)
 */
export interface TrendhooksFeatures {
  apiKeys?: boolean;
  settings?: boolean;
  posts?: boolean;
}

/** The names `--features` / TRENDHOOKS_FEATURES take, in order. */
export const FEATURE_NAMES = ['core', 'api-keys', 'settings', 'posts'] as const;
export type FeatureName = (typeof FEATURE_NAMES)[number];

const FEATURE_KEYS: Record<Exclude<FeatureName, 'core'>, keyof TrendhooksFeatures> = { 'api-keys': 'apiKeys', settings: 'settings', posts: 'posts' };

/** `core,api-keys,posts` → `{ apiKeys: true, settings: false, posts: true }`; `core` may be omitted, an unknown name is an error. */
export function parseFeatures(text: string): Required<TrendhooksFeatures> {
  const names = text.split(/[\s,]+/).filter(Boolean);
  const unknown = names.filter((n) => !(FEATURE_NAMES as readonly string[]).includes(n));
  if (unknown.length > 0) throw new Error(`unknown feature ${unknown.map((n) => `"${n}"`).join(', ')}; the features are ${FEATURE_NAMES.join(', ')}`);
  const on = new Set(names);
  return { apiKeys: on.has('api-keys'), settings: on.has('settings'), posts: on.has('posts') };
}

/** Every feature on unless switched off. */
export function resolveFeatures(f: TrendhooksFeatures = {}): Required<TrendhooksFeatures> {
  return { apiKeys: f.apiKeys ?? true, settings: f.settings ?? true, posts: f.posts ?? true };
}

/** The names of the features switched on, core first (for messages). */
export function featureNames(f: TrendhooksFeatures = {}): FeatureName[] {
  const r = resolveFeatures(f);
  return FEATURE_NAMES.filter((n) => n === 'core' || r[FEATURE_KEYS[n]]);
}

type MigrationClass = new () => MigrationInterface;

/** Each dialect's migrations per feature. */
const FEATURE_MIGRATIONS: Record<Dialect, Record<'core' | keyof TrendhooksFeatures, MigrationClass[]>> = {
  sqlite: SQLITE_FEATURE_MIGRATIONS,
  postgres: POSTGRES_FEATURE_MIGRATIONS,
};

/**
 * trendhooks' migrations for a host's own DataSource and migrations table: core plus the features
 * switched on, for one dialect.
 *
 *   migrations: [...hostMigrations, ...trendhooksMigrations('postgres', { posts: false })], migrationsTableName: 'host_migrations'
 *
 * A different series from SQLITE_/POSTGRES_MIGRATIONS (the standalone's, recorded in
 * `trendhooks_migrations`), building the same tables: never give one database both.
 */
export function trendhooksMigrations(dialect: Dialect, features: TrendhooksFeatures = {}): MigrationClass[] {
  // A JavaScript caller's other name is refused: another database's schema is not SQLite's.
  const sets = FEATURE_MIGRATIONS[assertDialect(String(dialect), "trendhooksMigrations' dialect")];
  const r = resolveFeatures(features);
  return [...sets.core, ...(r.apiKeys ? sets.apiKeys : []), ...(r.settings ? sets.settings : []), ...(r.posts ? sets.posts : [])];
}
