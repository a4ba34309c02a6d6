import { Controller, Get, Param, Query, UseFilters, UseGuards, UseInterceptors } from '@nestjs/common';
import { Principal } from '../auth/api-key.service';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/plan.decorator';
import { EnvelopeInterceptor } from '../common/envelope.interceptor';
import { ApiExceptionFilter } from '../common/exception.filter';
import type { ListQuery } from '../pagination/pagination.service';
import { PostsService } from './posts.service';

// Open to every plan (no @BusinessPlus); guard, envelope and filter are controller-scoped like the
// webhook routes, so they answer the same inside a host app.
@Controller('v1')
@UseGuards(ApiKeyGuard)
@UseInterceptors(EnvelopeInterceptor)
@UseFilters(ApiExceptionFilter)
export class PostsController {
  constructor(private readonly posts: PostsService) {}

  @Get('subreddits/:subreddit/posts')
  bySubreddit(@CurrentPrincipal() caller: Principal, @Param('subreddit') subreddit: string, @Query() query: ListQuery) {
    return this.posts.listBySubreddit(caller, subreddit, query);
  }

  @Get('users/:username/posts')
  byUser(@CurrentPrincipal() caller: Principal, @Param('username') username: string, @Query() query: ListQuery) {
    return this.posts.listByUser(caller, username, query);
  }
}
