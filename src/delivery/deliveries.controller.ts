import { Controller, Get, HttpCode, Param, Post, Query, UseFilters, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { Principal } from '../auth/api-key.service';
import { BusinessPlus, CurrentPrincipal } from '../auth/plan.decorator';
import { EnvelopeInterceptor } from '../common/envelope.interceptor';
import { ApiExceptionFilter } from '../common/exception.filter';
import type { ListQuery } from '../pagination/pagination.service';
import { DeliveriesService } from './deliveries.service';

@Controller('v1/webhooks/:webhook_id')
@BusinessPlus()
@UseGuards(ApiKeyGuard)
@UseInterceptors(EnvelopeInterceptor)
@UseFilters(ApiExceptionFilter)
export class DeliveriesController {
  constructor(private readonly deliveries: DeliveriesService) {}

  @Get('deliveries')
  list(@CurrentPrincipal() caller: Principal, @Param('webhook_id') webhookId: string, @Query() query: ListQuery) {
    return this.deliveries.list(caller, webhookId, query);
  }

  @Post('deliveries/:delivery_id/retry')
  @HttpCode(202)
  retry(@CurrentPrincipal() caller: Principal, @Param('webhook_id') webhookId: string, @Param('delivery_id') deliveryId: string) {
    return this.deliveries.retry(caller, webhookId, deliveryId);
  }

  @Post('test')
  @HttpCode(202)
  test(@CurrentPrincipal() caller: Principal, @Param('webhook_id') webhookId: string) {
    return this.deliveries.sendTest(caller, webhookId);
  }
}
