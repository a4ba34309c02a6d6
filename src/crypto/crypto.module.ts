import { Module } from '@nestjs/common';
import { SettingsModule } from '../settings/settings.module';
import { CryptoConfigurableModule } from './crypto.options';
import { SecretBox } from './secret-box';

/**
 * Encryption at rest of stored secrets (see README "Secrets at rest").
 *
 *   CryptoModule.forRoot({ keys: parseEncryptionKeys(process.env.ENCRYPTION_KEYS) })
 *   CryptoModule.forRoot({ keyFile: '/var/lib/trendhooks/trendhooks.key' })
 *
 * Global by default, like PaginationModule; registers no APP_* providers. WebhooksModule,
 * DeliveryModule and PaginationModule need it on the same TypeORM connection.
 */
@Module({
  // The key check values live in `settings`, asked of its store.
  imports: [SettingsModule],
  providers: [SecretBox],
  exports: [SecretBox],
})
export class CryptoModule extends CryptoConfigurableModule {}
