import { Controller, Get, HttpCode, Param, Post, Query, UseFilters, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '../openapi/swagger';
import { PrincipalGuard } from '../auth/principal.guard';
import { TrendhooksPrincipal } from '../auth/principal';
import { BusinessPlus, CurrentPrincipal } from '../auth/plan.decorator';
import { envelope, RequestId } from '../common/envelope';
import { ApiExceptionFilter } from '../common/exception.filter';
import { ApiEnvelopeResponse, ApiErrorResponses, ApiListQuery, ApiV1Controller, ApiWebhookIdParam } from '../openapi/decorators';
import type { ListQuery } from '../pagination/pagination.service';
import { DeliveriesService } from './deliveries.service';
import { DeliveryResource, TestDeliveryResource } from '../delivery/delivery.resource';

@Controller('v1/webhooks/:webhook_id')
@BusinessPlus()
@UseGuards(PrincipalGuard)
@UseFilters(ApiExceptionFilter)
@ApiTags('Deliveries')
@ApiV1Controller({ businessPlus: true })
@ApiWebhookIdParam()
export class DeliveriesController {
  constructor(private readonly deliveries: DeliveriesService) {}

  @Get('deliveries')
  @ApiOperation({ operationId: 'listDeliveries', summary: "List a webhook's deliveries", description: 'Newest first, each with every attempt; keyset-paged.' })
  @ApiListQuery({ prev: true })
  @ApiEnvelopeResponse(200, DeliveryResource, 'Delivery', 'A page of deliveries.', 'list-with-prev')
  @ApiErrorResponses({
    400: '`VALIDATION_ERROR` (`webhook_id` is not a ULID), `BAD_REQUEST` (a bad `limit`) or `INVALID_CURSOR`.',
    404: "`NOT_FOUND`: no such webhook, or another customer's.",
  })
  async list(@CurrentPrincipal() caller: TrendhooksPrincipal, @Param('webhook_id') webhookId: string, @Query() query: ListQuery, @RequestId() requestId: string) {
    return envelope(requestId, await this.deliveries.list(caller, webhookId, query));
  }

  @Post('deliveries/:delivery_id/retry')
  @HttpCode(202)
  @ApiOperation({ operationId: 'retryDelivery', summary: 'Retry a delivery now', description: 'Queued again under the same id (receivers deduplicate on it).' })
  @ApiParam({ name: 'delivery_id', description: 'The delivery id, `msg_` + 26 characters.', schema: { type: 'string', example: 'msg_0123456789abcdefghjkmnpqrs' } })
  @ApiEnvelopeResponse(202, DeliveryResource, 'Delivery', 'The delivery, queued again.')
  @ApiErrorResponses({
    400: '`VALIDATION_ERROR`: `webhook_id` or `delivery_id` is malformed.',
    404: "`NOT_FOUND`: no such webhook or delivery, or another customer's.",
    409: '`CONFLICT`: an attempt of this delivery is in flight.',
  })
  async retry(@CurrentPrincipal() caller: TrendhooksPrincipal, @Param('webhook_id') webhookId: string, @Param('delivery_id') deliveryId: string, @RequestId() requestId: string) {
    return envelope(requestId, await this.deliveries.retry(caller, webhookId, deliveryId));
  }

  @Post('test')
  @HttpCode(202)
  @ApiOperation({ operationId: 'sendTestEvent', summary: 'Send a test event', description: 'A `webhook.test` event, delivered to this webhook only.' })
  @ApiEnvelopeResponse(202, TestDeliveryResource, 'TestDelivery', 'The test event and its delivery, queued.')
  @ApiErrorResponses({ 400: '`VALIDATION_ERROR`: `webhook_id` is not a ULID.', 404: "`NOT_FOUND`: no such webhook, or another customer's." })
  async test(@CurrentPrincipal() caller: TrendhooksPrincipal, @Param('webhook_id') webhookId: string, @RequestId() requestId: string) {
    return envelope(requestId, await this.deliveries.sendTest(caller, webhookId));
  }
}
