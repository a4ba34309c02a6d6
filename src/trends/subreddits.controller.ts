import { Controller, Get, Param, UseFilters, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '../openapi/swagger';
import { BusinessPlus, CurrentPrincipal } from '../auth/plan.decorator';
import type { TrendhooksPrincipal } from '../auth/principal';
import { PrincipalGuard } from '../auth/principal.guard';
import { envelope, RequestId } from '../common/envelope';
import { ApiExceptionFilter } from '../common/exception.filter';
import { ApiEnvelopeResponse, ApiErrorResponses, ApiV1Controller } from '../openapi/decorators';
import { SubredditCoverageService } from './coverage.service';
import { SubredditCoverageResource } from './dto/subreddit-coverage.resource';

// Guard, envelope and filter controller-scoped, like the webhook and posts routes.
@Controller('v1')
@BusinessPlus()
@UseGuards(PrincipalGuard)
@UseFilters(ApiExceptionFilter)
@ApiTags('Subreddits')
@ApiV1Controller({ businessPlus: true })
export class SubredditsController {
  constructor(private readonly coverage: SubredditCoverageService) {}

  @Get('subreddits/:subreddit')
  @ApiOperation({
    operationId: 'getSubreddit',
    summary: 'Whether trendhooks can read a subreddit',
    description: 'Its status (`ok`, `private`, `banned`, …), when it was last read, and what the last read met. Tracked means tracked for the caller: one of its own webhooks subscribes to it, or the operator tracks it for everyone (`TRACKED_SUBREDDITS`); another customer\'s webhooks never make it tracked, and an untracked subreddit shows nothing of earlier reads.',
  })
  @ApiParam({ name: 'subreddit', description: "Reddit's name rule, case-insensitive; an `r/` prefix is allowed.", schema: { type: 'string', example: 'typescript' } })
  @ApiEnvelopeResponse(200, SubredditCoverageResource, 'Subreddit', 'The subreddit\'s coverage.')
  @ApiErrorResponses({ 400: '`VALIDATION_ERROR`: a bad `subreddit`.' })
  async get(@CurrentPrincipal() caller: TrendhooksPrincipal, @Param('subreddit') subreddit: string, @RequestId() requestId: string) {
    return envelope(requestId, await this.coverage.subreddit(subreddit, caller.tenantId));
  }
}
