import { Module } from '@nestjs/common';
import { CursorKeys } from './cursor-keys';
import { PaginationConfigurableModule } from './pagination.options';
import { PaginationService } from './pagination.service';

@Module({
  providers: [CursorKeys, PaginationService],
  exports: [PaginationService, CursorKeys],
})
export class PaginationModule extends PaginationConfigurableModule {}
