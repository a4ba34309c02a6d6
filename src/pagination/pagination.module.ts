import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CLOCK, SystemClock } from '../common/clock';
import { CursorKeys } from './cursor-keys';
import { PAGINATION_ENTITIES } from './entities';
import { PaginationConfigurableModule } from './pagination.options';
import { PaginationService } from './pagination.service';

@Module({
  imports: [TypeOrmModule.forFeature(PAGINATION_ENTITIES)],
  providers: [{ provide: CLOCK, useClass: SystemClock }, CursorKeys, PaginationService],
  exports: [PaginationService, CursorKeys],
})
export class PaginationModule extends PaginationConfigurableModule {}
