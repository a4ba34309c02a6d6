import { Controller, Get, Query, UseFilters, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiTags } from '../openapi/swagger';
import { TrendhooksPrincipal } from '../auth/principal';
import { PrincipalGuard } from '../auth/principal.guard';
import { BusinessPlus, CurrentPrincipal } from '../auth/plan.decorator';
import { envelope, RequestId } from '../common/envelope';
import { ApiExceptionFilter } from '../common/exception.filter';
import { SUBREDDIT_INPUT } from '../common/reddit-names';
import { EVENT_KINDS } from '../events/catalogue';
import { ApiEnvelopeResponse, ApiErrorResponses, ApiListQuery, ApiV1Controller } from '../openapi/decorators';
import type { ListQuery } from '../pagination/pagination.service';
import { EventResource } from './dto/event.resource';
import type { EventsFilterQuery } from './events-filter';
import { EventsHistoryService } from './events-history.service';

@Controller('v1/events')
@BusinessPlus()
@UseGuards(PrincipalGuard)
@UseFilters(ApiExceptionFilter)
@ApiTags('Events')
@ApiV1Controller({ businessPlus: true })
export class EventsController {
  constructor(private readonly history: EventsHistoryService) {}

  @Get()
  @ApiOperation({
    operationId: 'listEvents',
    summary: 'List the events of your subscriptions',
    description:
      'Newest first, keyset-paged: the trend events of the kinds and subreddits the caller has webhooks for, each from when its first such webhook was created; ' +
      'a pull fallback while a receiver is down. A filter naming a kind or subreddit the caller does not subscribe to finds nothing. Test events never appear. ' +
      'A cursor carries the filters it was issued with, so pass the same ones with it (other filters: `400 INVALID_CURSOR`).',
  })
  @ApiListQuery({ prev: true })
  // Decorators apply bottom-up: the document lists event, subreddit, since.
  @ApiQuery({ name: 'since', required: false, description: 'Only events created at or after this instant (ISO 8601 with a zone, e.g. `2026-11-28T07:00:00Z`).', schema: { type: 'string', format: 'date-time' } })
  @ApiQuery({ name: 'subreddit', required: false, description: 'Only this subreddit (an r/ prefix is stripped; any case).', schema: { type: 'string', pattern: SUBREDDIT_INPUT.source } })
  @ApiQuery({ name: 'event', required: false, description: 'Only this kind.', schema: { type: 'string', enum: [...EVENT_KINDS] } })
  @ApiEnvelopeResponse(200, EventResource, 'Event', 'A page of events.', 'list-with-prev')
  @ApiErrorResponses({
    400: '`VALIDATION_ERROR` (a bad `event`, `subreddit` or `since`, named in the message), `BAD_REQUEST` (a bad `limit`) or `INVALID_CURSOR` (also: a cursor given with other filters).',
  })
  async list(@CurrentPrincipal() caller: TrendhooksPrincipal, @Query() query: ListQuery & EventsFilterQuery, @RequestId() requestId: string) {
    return envelope(requestId, await this.history.list(caller, query));
  }
}
