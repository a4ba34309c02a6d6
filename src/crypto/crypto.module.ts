import { DynamicModule, Module } from '@nestjs/common';
import { configuredModule } from '../core/configured-module';
import { SettingsModule } from '../settings/settings.module';
import { CRYPTO_OPTIONS_ASYNC_TYPE, CRYPTO_OPTIONS_TYPE, CryptoConfigurableModule } from './crypto.options';
import { SecretBox } from './secret-box';

/** CryptoModule's options (configuredModule). */
@Module({})
class CryptoOptionsModule extends CryptoConfigurableModule {}

/**
 * Encryption at rest of stored secrets (see README "Secrets at rest").
 *
 *   CryptoModule.forRoot({ keys: parseEncryptionKeys(process.env.ENCRYPTION_KEYS) })
 *   CryptoModule.forRoot({ keyFile: '/var/lib/trendhooks/trendhooks.key' })
 *
 * Not global: WebhooksModule, DeliveryModule and PaginationModule import it, on the options the
 * host's forRoot set (configuredModule). Registers no APP_* providers.
 */
@Module({
  // The key check values live in `settings`, asked of its store.
  imports: [SettingsModule],
  providers: [SecretBox],
  exports: [SecretBox],
})
export class CryptoModule {
  static forRoot(options: typeof CRYPTO_OPTIONS_TYPE): DynamicModule {
    return configuredModule(CryptoModule, CryptoOptionsModule.forRoot(options), options.isGlobal);
  }

  static forRootAsync(options: typeof CRYPTO_OPTIONS_ASYNC_TYPE): DynamicModule {
    return configuredModule(CryptoModule, CryptoOptionsModule.forRootAsync(options), options.isGlobal);
  }
}
