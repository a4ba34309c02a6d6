import { Controller, Get, Param, Query, UseFilters, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '../openapi/swagger';
import { TrendhooksPrincipal } from '../auth/principal';
import { PrincipalGuard } from '../auth/principal.guard';
import { CurrentPrincipal } from '../auth/plan.decorator';
import { envelope, RequestId } from '../common/envelope';
import { ApiExceptionFilter } from '../common/exception.filter';
import { ApiEnvelopeResponse, ApiErrorResponses, ApiListQuery, ApiV1Controller } from '../openapi/decorators';
import type { ListQuery } from '../pagination/pagination.service';
import { PostResource } from './dto/post.resource';
import { PostsService } from './posts.service';

// Open to every plan (no @BusinessPlus); guard, envelope and filter are controller-scoped like the
// webhook routes, so they answer the same inside a host app.
@Controller('v1')
@UseGuards(PrincipalGuard)
@UseFilters(ApiExceptionFilter)
@ApiTags('Posts')
@ApiV1Controller({ businessPlus: false })
@ApiListQuery({ prev: false })
@ApiEnvelopeResponse(200, PostResource, 'Post', 'A page of posts, newest first.', 'list-next-only')
export class PostsController {
  constructor(private readonly posts: PostsService) {}

  @Get('subreddits/:subreddit/posts')
  @ApiOperation({ operationId: 'listSubredditPosts', summary: "List a subreddit's posts", description: 'Stored posts, newest first (`created_at`, then `id`); any plan.' })
  @ApiParam({
    name: 'subreddit',
    description: "Reddit's name rule, case-insensitive; an `r/` prefix is allowed.",
    schema: { type: 'string', example: 'typescript' },
  })
  @ApiErrorResponses({ 400: '`VALIDATION_ERROR` (a bad `subreddit`), `BAD_REQUEST` (a bad `limit`) or `INVALID_CURSOR`.' })
  async bySubreddit(@CurrentPrincipal() caller: TrendhooksPrincipal, @Param('subreddit') subreddit: string, @Query() query: ListQuery, @RequestId() requestId: string) {
    return envelope(requestId, await this.posts.listBySubreddit(caller, subreddit, query));
  }

  @Get('users/:username/posts')
  @ApiOperation({ operationId: 'listUserPosts', summary: "List a user's posts", description: "Stored posts of one author across subreddits, newest first; any plan." })
  @ApiParam({
    name: 'username',
    description: "Reddit's rule (3–20 letters, digits, `_` or `-`), case-insensitive; a `u/` prefix is allowed.",
    schema: { type: 'string', example: 'spez' },
  })
  @ApiErrorResponses({ 400: '`VALIDATION_ERROR` (a bad `username`), `BAD_REQUEST` (a bad `limit`) or `INVALID_CURSOR`.' })
  async byUser(@CurrentPrincipal() caller: TrendhooksPrincipal, @Param('username') username: string, @Query() query: ListQuery, @RequestId() requestId: string) {
    return envelope(requestId, await this.posts.listByUser(caller, username, query));
  }
}
