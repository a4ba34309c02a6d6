import { Controller, Get, HttpCode, Param, Post, Query, UseFilters, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiQuery, ApiTags } from '../openapi/swagger';
import { PrincipalGuard } from '../auth/principal.guard';
import { TrendhooksPrincipal } from '../auth/principal';
import { BusinessPlus, CurrentPrincipal } from '../auth/plan.decorator';
import { envelope, RequestId } from '../common/envelope';
import { ApiExceptionFilter } from '../common/exception.filter';
import { ApiEnvelopeResponse, ApiErrorResponses, ApiListQuery, ApiV1Controller, ApiWebhookIdParam } from '../openapi/decorators';
import type { ListQuery } from '../pagination/pagination.service';
import { DeliveriesService } from './deliveries.service';
import { DELIVERY_STATES, DeliveryResource, TestDeliveryResource } from '../delivery/delivery.resource';
import type { DeliveryFilterQuery } from './delivery-filters';

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
  @ApiOperation({
    operationId: 'listDeliveries',
    summary: "List a webhook's deliveries",
    description:
      'Newest first, each with every attempt; keyset-paged. `state`, `since` and `until` filter the log and combine (all must hold); ' +
      'a cursor carries the filters it was issued with, so pass the same ones with it (other filters: `400 INVALID_CURSOR`).',
  })
  @ApiListQuery({ prev: true })
  // Decorators apply bottom-up: the document lists state, since, until.
  @ApiQuery({ name: 'until', required: false, description: 'Only deliveries created before this instant (excluded); must be after `since`.', schema: { type: 'string', format: 'date-time' } })
  @ApiQuery({
    name: 'since',
    required: false,
    description: 'Only deliveries created at or after this instant (ISO 8601 with a zone, e.g. `2026-11-28T07:00:00Z`): the range is half-open, [since, until).',
    schema: { type: 'string', format: 'date-time' },
  })
  @ApiQuery({ name: 'state', required: false, description: 'Only deliveries in this state.', schema: { type: 'string', enum: [...DELIVERY_STATES] } })
  @ApiEnvelopeResponse(200, DeliveryResource, 'Delivery', 'A page of deliveries.', 'list-with-prev')
  @ApiErrorResponses({
    400: '`VALIDATION_ERROR` (`webhook_id` is not a ULID; a bad `state`, `since` or `until`, named in the message), `BAD_REQUEST` (a bad `limit`) or `INVALID_CURSOR` (also: a cursor given with other filters).',
    404: "`NOT_FOUND`: no such webhook, or another customer's.",
  })
  async list(@CurrentPrincipal() caller: TrendhooksPrincipal, @Param('webhook_id') webhookId: string, @Query() query: ListQuery & DeliveryFilterQuery, @RequestId() requestId: string) {
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
    409: '`CONFLICT`: an attempt of this delivery is in flight; `WEBHOOK_DISABLED`: the webhook is disabled (resume it first).',
  })
  async retry(@CurrentPrincipal() caller: TrendhooksPrincipal, @Param('webhook_id') webhookId: string, @Param('delivery_id') deliveryId: string, @RequestId() requestId: string) {
    return envelope(requestId, await this.deliveries.retry(caller, webhookId, deliveryId));
  }

  @Post('test')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'sendTestEvent',
    summary: 'Send a test event',
    description:
      "An event of the webhook's own kind for its subreddit, with the kind's example figures (its body's example in `webhooks`), " +
      'delivered to this webhook only, signed and retried as any delivery. `data.test` is `true` on it and absent on every real event; ' +
      "its `event_id` starts `evt_test_`. It is listed among the webhook's deliveries.",
  })
  @ApiEnvelopeResponse(202, TestDeliveryResource, 'TestDelivery', 'The test event and its delivery, queued.')
  @ApiErrorResponses({
    400: '`VALIDATION_ERROR`: `webhook_id` is not a ULID.',
    404: "`NOT_FOUND`: no such webhook, or another customer's.",
    409: '`WEBHOOK_DISABLED`: the webhook is disabled (resume it first).',
  })
  async test(@CurrentPrincipal() caller: TrendhooksPrincipal, @Param('webhook_id') webhookId: string, @RequestId() requestId: string) {
    return envelope(requestId, await this.deliveries.sendTest(caller, webhookId));
  }
}
