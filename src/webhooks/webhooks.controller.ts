import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, UseFilters, UseGuards, UseInterceptors } from '@nestjs/common';
import { Principal } from '../auth/api-key.service';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { BusinessPlus, CurrentPrincipal } from '../auth/plan.decorator';
import { EnvelopeInterceptor } from '../common/envelope.interceptor';
import { ApiExceptionFilter } from '../common/exception.filter';
import { BodyValidationPipe } from '../common/validation';
import type { ListQuery } from '../pagination/pagination.service';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import { WebhooksService } from './webhooks.service';

// Guard, envelope and error filter are controller-scoped, so the routes answer the same way
// inside a host app that has its own global setup.
@Controller('v1/webhooks')
@BusinessPlus()
@UseGuards(ApiKeyGuard)
@UseInterceptors(EnvelopeInterceptor)
@UseFilters(ApiExceptionFilter)
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @HttpCode(201)
  create(@CurrentPrincipal() caller: Principal, @Body(BodyValidationPipe) body: CreateWebhookDto) {
    return this.webhooks.create(caller, body);
  }

  @Get()
  list(@CurrentPrincipal() caller: Principal, @Query() query: ListQuery) {
    return this.webhooks.list(caller, query);
  }

  @Get(':webhook_id')
  get(@CurrentPrincipal() caller: Principal, @Param('webhook_id') id: string) {
    return this.webhooks.get(caller, id);
  }

  @Post(':webhook_id/rotate-secret')
  @HttpCode(200)
  rotateSecret(@CurrentPrincipal() caller: Principal, @Param('webhook_id') id: string) {
    return this.webhooks.rotateSecret(caller, id);
  }

  @Delete(':webhook_id')
  @HttpCode(204)
  async remove(@CurrentPrincipal() caller: Principal, @Param('webhook_id') id: string): Promise<void> {
    await this.webhooks.remove(caller, id);
  }
}
