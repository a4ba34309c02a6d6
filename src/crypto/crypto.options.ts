import { ConfigurableModuleBuilder, Inject } from '@nestjs/common';
import { globalOptions } from '../core/configured-module';
import type { EncryptionKey } from './key-ring';

export interface CryptoModuleOptions {
  /** The key ring, newest (encrypting) first (ENCRYPTION_KEYS). */
  keys?: EncryptionKey[];
  /** Without `keys`: the key file, created with a generated key when absent (ENCRYPTION_KEY_FILE). */
  keyFile?: string;
}

export const { ConfigurableModuleClass: CryptoConfigurableModule, MODULE_OPTIONS_TOKEN: CRYPTO_OPTIONS, OPTIONS_TYPE: CRYPTO_OPTIONS_TYPE, ASYNC_OPTIONS_TYPE: CRYPTO_OPTIONS_ASYNC_TYPE } = new ConfigurableModuleBuilder<CryptoModuleOptions>()
  .setClassMethodName('forRoot')
  // The options only are global (globalOptions); the module is imported where it is needed.
  .setExtras({ isGlobal: false }, (definition) => globalOptions(definition))
  .build();

/** `@InjectCryptoOptions() options: CryptoModuleOptions`: what forRoot / forRootAsync was given. */
export const InjectCryptoOptions = (): ParameterDecorator & PropertyDecorator => Inject(CRYPTO_OPTIONS);
