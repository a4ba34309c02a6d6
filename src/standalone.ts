/**
 * `trendhooks/standalone`: the whole service as one Nest app, as `trendhooks serve` runs it. A host
 * that embeds trendhooks in its own Nest app imports the modules from `trendhooks` (src/index.ts)
 * instead; this entry is for running the service from code (tests, a custom launcher).
 */
export { AppModule, ROLES, type AppModuleOverrides, type Role } from './app.module';
export { createApp, migrateDatabase, serve, ListenError, type CreateAppOptions } from './app';
export { type AppConfig, loadConfig, type HttpAdapterName } from './config/config';
