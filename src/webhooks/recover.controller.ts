import { Body, Controller, HttpCode, Param, Post, UseFilters, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '../openapi/swagger';
import { TrendhooksPrincipal } from '../auth/principal';
import { PrincipalGuard } from '../auth/principal.guard';
import { BusinessPlus, CurrentPrincipal } from '../auth/plan.decorator';
import { BodyErrorGuard, envelope, RequestId } from '../common/envelope';
import { ApiExceptionFilter } from '../common/exception.filter';
import { BodyValidationPipe } from '../common/validation';
import { ApiEnvelopeResponse, ApiErrorResponses, ApiV1Controller, ApiWebhookIdParam } from '../openapi/decorators';
import { RecoverDto, RecoveryResource } from './dto/recover.dto';
import type { RecoverInput } from './recover-window';
import { RecoverService } from './recover.service';

@Controller('v1/webhooks/:webhook_id')
@BusinessPlus()
@UseGuards(PrincipalGuard, BodyErrorGuard)
@UseFilters(ApiExceptionFilter)
@ApiTags('Deliveries')
@ApiV1Controller({ businessPlus: true })
@ApiWebhookIdParam()
export class RecoverController {
  constructor(private readonly recovery: RecoverService) {}

  @Post('recover')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'recoverDeliveries',
    summary: 'Deliver again what an outage missed',
    description:
      "Queues once, oldest first, every event of the webhook's subscription (its `event` and `subreddit`) created in [`since`, `until`) that did not end delivered to it: " +
      'failed or cancelled deliveries go out again under their own `webhook-id` (their attempts count from 1 again; earlier attempts stay in the log), ' +
      'and events that never got a delivery (created since the webhook was) get one, with the `webhook-id` they would have had. Deliveries pending, held (by a paused webhook) or in flight are left alone. ' +
      "The walk starts at `since` or the webhook's `created_at`, whichever is later: events from before the webhook are not looked at. " +
      'At most 14 days per call, and 10,000 rows, test events included (`next_since` says where to go on; never before the webhook). `dry_run` only counts. Counts as a manual retry against the send limit (a dry run does not). ' +
      'Recovers, dry runs included, run one at a time per customer and at most 30 a minute. ' +
      'Answers `202` either way.',
  })
  @ApiBody({ type: RecoverDto })
  @ApiEnvelopeResponse(202, RecoveryResource, 'Recovery', 'What was queued (or, dry run, would be).')
  @ApiErrorResponses({
    400: '`VALIDATION_ERROR` (`webhook_id` is not a ULID; `since` missing, not an ISO 8601 instant with a zone, or in the future; `until` not after `since`, or more than 14 days after it; an unknown field) or `INVALID_JSON`.',
    404: "`NOT_FOUND`: no such webhook, or another customer's.",
    409: '`WEBHOOK_DISABLED`: the webhook is disabled (a dry run still counts); resume it with `PATCH` first.',
    415: '`UNSUPPORTED_MEDIA_TYPE`: the body is not `application/json`.',
    429: '`RATE_LIMITED`: another recover of the customer is running, more than 30 recovers (dry runs included) this minute, or (not a dry run) too many test events, manual retries and recovers this minute; retry after `Retry-After` seconds.',
  })
  // The parameter is typed by an interface so a host app's global ValidationPipe skips it.
  async recover(@CurrentPrincipal() caller: TrendhooksPrincipal, @Param('webhook_id') webhookId: string, @Body(new BodyValidationPipe(RecoverDto)) body: RecoverInput, @RequestId() requestId: string) {
    return envelope(requestId, await this.recovery.recover(caller, webhookId, body));
  }
}
