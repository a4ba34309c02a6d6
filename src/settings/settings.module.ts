import { Module } from '@nestjs/common';
import { SettingsStore } from './settings.store';

/**
 * The `settings` table's module: SettingsStore, on the trendhooks connection. CryptoModule (key
 * check values) and PaginationModule (the generated cursor secret) import it.
 */
@Module({
  providers: [SettingsStore],
  exports: [SettingsStore],
})
export class SettingsModule {}
