import { DynamicModule, Module } from '@nestjs/common';
import { configuredModule } from '../core/configured-module';
import { CryptoModule } from '../crypto/crypto.module';
import { SettingsModule } from '../settings/settings.module';
import { CursorKeys } from './cursor-keys';
import { PAGINATION_OPTIONS_ASYNC_TYPE, PAGINATION_OPTIONS_TYPE, PaginationConfigurableModule } from './pagination.options';
import { PaginationService } from './pagination.service';

/** PaginationModule's options (configuredModule). */
@Module({})
class PaginationOptionsModule extends PaginationConfigurableModule {}

/**
 * Signed keyset cursors (PaginationService). The generated cursor secret is kept in `settings`,
 * encrypted with CryptoModule's key ring.
 */
@Module({
  imports: [SettingsModule, CryptoModule],
  providers: [CursorKeys, PaginationService],
  exports: [PaginationService, CursorKeys],
})
export class PaginationModule {
  static forRoot(options: typeof PAGINATION_OPTIONS_TYPE): DynamicModule {
    return configuredModule(PaginationModule, PaginationOptionsModule.forRoot(options), options.isGlobal);
  }

  static forRootAsync(options: typeof PAGINATION_OPTIONS_ASYNC_TYPE): DynamicModule {
    return configuredModule(PaginationModule, PaginationOptionsModule.forRootAsync(options), options.isGlobal);
  }
}
