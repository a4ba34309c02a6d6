import { ConfigurableModuleBuilder, Inject } from '@nestjs/common';
import type { EncryptionKey } from './key-ring';

export interface CryptoModuleOptions {
  /** The key ring, newest (encrypting) first (ENCRYPTION_KEYS). */
  keys?: EncryptionKey[];
  /** Without `keys`: the key file, created with a generated key when absent (ENCRYPTION_KEY_FILE). */
  keyFile?: string;
}

export const { ConfigurableModuleClass: CryptoConfigurableModule, MODULE_OPTIONS_TOKEN: CRYPTO_OPTIONS } = new ConfigurableModuleBuilder<CryptoModuleOptions>()
  .setClassMethodName('forRoot')
  // Global by default so webhooks, delivery and pagination share one key ring.
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/** `@InjectCryptoOptions() options: CryptoModuleOptions`: what forRoot / forRootAsync was given. */
export const InjectCryptoOptions = (): ParameterDecorator & PropertyDecorator => Inject(CRYPTO_OPTIONS);
