import { Module } from '@nestjs/common';
import { PortalSessionStore } from './portal-session.store';
import { PortalSessionsService } from './portal-sessions.service';

/**
 * Portal links and sessions, without routes or identity: what a composition root hands to
 * `withPortalSessions(service, resolver)` inside AuthModule.forRootAsync, so that the same
 * PrincipalGuard (and every route behind it) also knows portal sessions. Its options come from
 * PortalModule.forRoot (defaults without it).
 */
@Module({
  providers: [PortalSessionStore, PortalSessionsService],
  exports: [PortalSessionsService],
})
export class PortalSessionsModule {}
