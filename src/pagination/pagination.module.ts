import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CLOCK, SystemClock } from '../common/clock';
import { SettingEntity } from '../database/setting.entity';
import { CursorKeys } from './cursor-keys';
import { PaginationConfigurableModule } from './pagination.options';
import { PaginationService } from './pagination.service';

@Module({
  imports: [TypeOrmModule.forFeature([SettingEntity])],
  providers: [{ provide: CLOCK, useClass: SystemClock }, CursorKeys, PaginationService],
  exports: [PaginationService, CursorKeys],
})
export class PaginationModule extends PaginationConfigurableModule {}
