import { PortalSessionEntity } from './portal-session.entity';

/** The table PortalModule reads and writes (`portal_sessions`, core feature); the composition root adds it to the connection. */
export const PORTAL_ENTITIES = [PortalSessionEntity];
