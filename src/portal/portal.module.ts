import { DynamicModule, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { JsonBodyMiddleware, ownJsonBodies } from '../common/json-body.middleware';
import { configuredModule } from '../core/configured-module';
import { DatabaseUnavailableModule } from '../database/unavailable';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { PortalPageController } from './portal-page.controller';
import { PortalSessionsController } from './portal-sessions.controller';
import { PortalSessionsModule } from './portal-sessions.module';
import { PORTAL_OPTIONS_ASYNC_TYPE, PORTAL_OPTIONS_TYPE, PortalConfigurableModule } from './portal.options';

@Module({})
class PortalOptionsModule extends PortalConfigurableModule {}

/**
 * The customer portal: `POST /v1/portal/sessions` (links), `GET /portal` (the page) and
 * `POST /portal/session` (a link exchanged for its session cookie). The page calls the webhook API
 * itself; for that API to know the session, the root passes AuthModule a resolver wrapped by
 * `withPortalSessions` (see docs/portal.md). Registers nothing globally.
 */
@Module({
  imports: [DatabaseUnavailableModule, AuthModule, WebhooksModule, PortalSessionsModule],
  controllers: [PortalSessionsController, PortalPageController],
  providers: [ownJsonBodies(PortalSessionsController, PortalPageController)],
})
export class PortalModule implements NestModule {
  static forRoot(options: typeof PORTAL_OPTIONS_TYPE = {}): DynamicModule {
    return configuredModule(PortalModule, PortalOptionsModule.forRoot(options), options.isGlobal);
  }

  static forRootAsync(options: typeof PORTAL_OPTIONS_ASYNC_TYPE): DynamicModule {
    return configuredModule(PortalModule, PortalOptionsModule.forRootAsync(options), options.isGlobal);
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(JsonBodyMiddleware).forRoutes(PortalSessionsController, { path: 'portal/session', method: RequestMethod.POST });
  }
}
