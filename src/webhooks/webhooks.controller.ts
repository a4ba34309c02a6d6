import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseFilters, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '../openapi/swagger';
import { TrendhooksPrincipal } from '../auth/principal';
import { PrincipalGuard } from '../auth/principal.guard';
import { BusinessPlus, CurrentPrincipal } from '../auth/plan.decorator';
import { BodyErrorGuard, envelope, RequestId } from '../common/envelope';
import { ApiExceptionFilter } from '../common/exception.filter';
import { BodyValidationPipe } from '../common/validation';
import { ApiEmptyResponse, ApiEnvelopeResponse, ApiErrorResponses, ApiListQuery, ApiV1Controller, ApiWebhookIdParam } from '../openapi/decorators';
import type { ListQuery } from '../pagination/pagination.service';
import { CreateWebhookDto, CreateWebhookInput } from './dto/create-webhook.dto';
import { UpdateWebhookDto, UpdateWebhookInput } from './dto/update-webhook.dto';
import { WebhookResource, WebhookWithSecretResource } from './dto/webhook.resource';
import { WebhooksService } from './webhooks.service';

// Guards, envelope and error filter are controller-scoped, so the routes answer the same way
// inside a host app that has its own global setup. A body error is raised after authentication.
@Controller('v1/webhooks')
@BusinessPlus()
@UseGuards(PrincipalGuard, BodyErrorGuard)
@UseFilters(ApiExceptionFilter)
@ApiTags('Webhooks')
@ApiV1Controller({ businessPlus: true })
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ operationId: 'createWebhook', summary: 'Create a webhook', description: 'The answer carries the signing `secret`, shown this once.' })
  @ApiBody({ type: CreateWebhookDto })
  @ApiEnvelopeResponse(201, WebhookWithSecretResource, 'WebhookWithSecret', 'The webhook, with its secret.')
  @ApiErrorResponses({
    400: '`VALIDATION_ERROR` (a field missing, of the wrong type, unknown or with a bad value; the message names it) or `INVALID_JSON`.',
    403: '`PLAN_REQUIRED`, or `WEBHOOK_QUOTA_EXCEEDED` (business 100, enterprise 1000 webhooks).',
    413: '`PAYLOAD_TOO_LARGE`: the body is over 64 KiB.',
    415: '`UNSUPPORTED_MEDIA_TYPE`: the body is not `application/json`.',
    422: '`WEBHOOK_DESTINATION_BLOCKED`: the URL fails the SSRF policy (the message names the address), its host does not resolve, or its DNS lookup failed or timed out.',
    429: "`RATE_LIMITED`: over the plan's requests per minute, or too many of the customer's DNS lookups in progress at once; retry after `Retry-After` seconds.",
  })
  // The parameter is typed by an interface so a host app's global ValidationPipe skips it.
  async create(@CurrentPrincipal() caller: TrendhooksPrincipal, @Body(new BodyValidationPipe(CreateWebhookDto)) body: CreateWebhookInput, @RequestId() requestId: string) {
    return envelope(requestId, await this.webhooks.create(caller, body));
  }

  @Get()
  @ApiOperation({ operationId: 'listWebhooks', summary: "List the caller's webhooks", description: 'Newest first, keyset-paged.' })
  @ApiListQuery({ prev: true })
  @ApiEnvelopeResponse(200, WebhookResource, 'Webhook', 'A page of webhooks.', 'list-with-prev')
  @ApiErrorResponses({ 400: '`BAD_REQUEST` (a bad `limit`) or `INVALID_CURSOR`.' })
  async list(@CurrentPrincipal() caller: TrendhooksPrincipal, @Query() query: ListQuery, @RequestId() requestId: string) {
    return envelope(requestId, await this.webhooks.list(caller, query));
  }

  @Get(':webhook_id')
  @ApiOperation({ operationId: 'getWebhook', summary: 'Get a webhook', description: 'Never with its secret.' })
  @ApiWebhookIdParam()
  @ApiEnvelopeResponse(200, WebhookResource, 'Webhook', 'The webhook.')
  @ApiErrorResponses({ 400: '`VALIDATION_ERROR`: `webhook_id` is not a ULID.', 404: "`NOT_FOUND`: no such webhook, or another customer's." })
  async get(@CurrentPrincipal() caller: TrendhooksPrincipal, @Param('webhook_id') id: string, @RequestId() requestId: string) {
    return envelope(requestId, await this.webhooks.get(caller, id));
  }

  @Patch(':webhook_id')
  @ApiOperation({
    operationId: 'updateWebhook',
    summary: 'Change, pause or resume a webhook',
    description:
      'Any of `url`, `allow_nonstandard_port` and `disabled`. `{"disabled": true}` pauses it: no new deliveries (its events are still recorded), its pending deliveries are `held`, not sent. ' +
      '`{"disabled": false}` resumes it, also after trendhooks disabled it (`gone`, `failing`, which cancelled its pending deliveries): held deliveries are `pending` again, due at once in order, ' +
      'and the answer\'s `resumed` says so and offers a recover of what the webhook missed, counted by a dry run. Never with its secret.',
  })
  @ApiWebhookIdParam()
  @ApiBody({ type: UpdateWebhookDto })
  @ApiEnvelopeResponse(200, WebhookResource, 'Webhook', 'The webhook as it is now.')
  @ApiErrorResponses({
    400: '`VALIDATION_ERROR` (`webhook_id` is not a ULID; no field given; a field of the wrong type, unknown or with a bad value; the message names it) or `INVALID_JSON`.',
    404: "`NOT_FOUND`: no such webhook, or another customer's.",
    413: '`PAYLOAD_TOO_LARGE`: the body is over 64 KiB.',
    415: '`UNSUPPORTED_MEDIA_TYPE`: the body is not `application/json`.',
    422: '`WEBHOOK_DESTINATION_BLOCKED`: the new URL (or the URL with the new `allow_nonstandard_port`) fails the SSRF policy, its host does not resolve, or its DNS lookup failed or timed out.',
    429: "`RATE_LIMITED`: over the plan's requests per minute, or too many of the customer's DNS lookups in progress at once; retry after `Retry-After` seconds.",
  })
  async update(
    @CurrentPrincipal() caller: TrendhooksPrincipal,
    @Param('webhook_id') id: string,
    @Body(new BodyValidationPipe(UpdateWebhookDto)) body: UpdateWebhookInput,
    @RequestId() requestId: string,
  ) {
    return envelope(requestId, await this.webhooks.update(caller, id, body));
  }

  @Post(':webhook_id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'rotateWebhookSecret',
    summary: "Rotate a webhook's signing secret",
    description: 'The answer carries the new `secret`, shown this once; the old one keeps signing beside it for 24 h.',
  })
  @ApiWebhookIdParam()
  @ApiEnvelopeResponse(200, WebhookWithSecretResource, 'WebhookWithSecret', 'The webhook, with its new secret.')
  @ApiErrorResponses({ 400: '`VALIDATION_ERROR`: `webhook_id` is not a ULID.', 404: "`NOT_FOUND`: no such webhook, or another customer's." })
  async rotateSecret(@CurrentPrincipal() caller: TrendhooksPrincipal, @Param('webhook_id') id: string, @RequestId() requestId: string) {
    return envelope(requestId, await this.webhooks.rotateSecret(caller, id));
  }

  @Delete(':webhook_id')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook',
    description: "Idempotent: also `204` when absent or another customer's (nothing changes then). Its queued deliveries stop.",
  })
  @ApiWebhookIdParam()
  @ApiEmptyResponse(204, 'Deleted, or nothing to delete.')
  @ApiErrorResponses({ 400: '`VALIDATION_ERROR`: `webhook_id` is not a ULID.' })
  async remove(@CurrentPrincipal() caller: TrendhooksPrincipal, @Param('webhook_id') id: string, @RequestId() _requestId: string): Promise<void> {
    // No body (204); the parameter still echoes X-Request-Id inside a host app.
    await this.webhooks.remove(caller, id);
  }
}

