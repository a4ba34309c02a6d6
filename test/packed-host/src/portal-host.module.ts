import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  AuthModule, CryptoModule, DeliveryModule, PaginationModule, PortalModule, PortalSessionsModule, PortalSessionsService, PrincipalResolver,
  SsrfModule, TrendhooksModule, WebhooksModule, parseEncryptionKeys, withPortalSessions,
} from 'trendhooks';
import { HOST_CONNECTION, HostAuthGuard, HostDirectory, HostDirectoryModule, HostPrincipalResolver, HostSettings, HostSignUpController, database } from './host.module.js';

/**
 * HostModule plus the customer portal: PortalModule at /portal, and AuthModule told of portal
 * sessions (withPortalSessions around your resolver), so links are minted for your principals and
 * the page's session reaches the same /v1/webhooks routes.
 */
@Module({})
export class PortalHostModule {
  static forRoot(s: HostSettings): DynamicModule {
    return {
      module: PortalHostModule,
      imports: [
        TypeOrmModule.forRoot(database(s)),
        TrendhooksModule.forRoot({ dataSource: HOST_CONNECTION }),
        HostDirectoryModule,
        AuthModule.forRootAsync({
          imports: [HostDirectoryModule, PortalSessionsModule],
          inject: [HostDirectory, PortalSessionsService],
          useFactory: (directory: HostDirectory, portal: PortalSessionsService) => ({
            principalResolver: new HostPrincipalResolver(directory),
            extendResolver: (r: PrincipalResolver) => withPortalSessions(portal, r),
          }),
        }),
        PortalModule.forRoot({}),
        CryptoModule.forRoot({ keys: parseEncryptionKeys(s.encryptionKeys) }),
        PaginationModule.forRoot({ secrets: [s.cursorSecret] }),
        SsrfModule.forRoot({ allowDestinations: s.allowDestinations }),
        DeliveryModule.forRoot({ worker: false }),
        WebhooksModule,
      ],
      controllers: [HostSignUpController],
      providers: [{ provide: APP_GUARD, useClass: HostAuthGuard }],
    };
  }
}
