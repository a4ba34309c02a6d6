import { Module } from '@nestjs/common';
import { SettingsModule } from '../settings/settings.module';
import { CursorKeys } from './cursor-keys';
import { PaginationConfigurableModule } from './pagination.options';
import { PaginationService } from './pagination.service';

@Module({
  imports: [SettingsModule],
  providers: [CursorKeys, PaginationService],
  exports: [PaginationService, CursorKeys],
})
export class PaginationModule extends PaginationConfigurableModule {}
