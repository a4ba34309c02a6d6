import { Injectable } from '@nestjs/common';
import { TrendhooksPrincipal } from '../auth/principal';
import { PlanService } from '../auth/plan.service';
import { Paged } from '../common/envelope';
import { AppError } from '../common/errors';
import { normaliseSubreddit, normaliseUsername, SUBREDDIT_INPUT, USERNAME_INPUT } from '../common/reddit-names';
import { CURSOR_ERROR_MESSAGES } from '../pagination/cursor-codec';
import { ListQuery, PageContext, PaginationService } from '../pagination/pagination.service';
import { PostResource, toPostResource } from './dto/post.resource';
import { isPostKeyset, PostListItem, PostStore } from './post.store';

/** Cursor route ids: a cursor of one posts route is INVALID_CURSOR on the other (spec 8.1.3). */
export const POSTS_SUBREDDIT_ROUTE = 'posts.subreddit';
export const POSTS_USER_ROUTE = 'posts.user';

/** The two posts routes: any plan, that plan's page size, newest first, next_cursor only. */
@Injectable()
export class PostsService {
  constructor(
    private readonly posts: PostStore,
    private readonly plans: PlanService,
    private readonly pagination: PaginationService,
  ) {}

  async listBySubreddit(caller: TrendhooksPrincipal, rawSubreddit: string, query: ListQuery): Promise<Paged<PostResource>> {
    const subreddit = parseSubredditParam(rawSubreddit);
    const ctx = await this.begin(caller, POSTS_SUBREDDIT_ROUTE, { subreddit }, query);
    return toPaged(ctx, await this.posts.pageBySubreddit(subreddit, ctx.request));
  }

  async listByUser(caller: TrendhooksPrincipal, rawUsername: string, query: ListQuery): Promise<Paged<PostResource>> {
    const username = parseUsernameParam(rawUsername);
    const ctx = await this.begin(caller, POSTS_USER_ROUTE, { username }, query);
    return toPaged(ctx, await this.posts.pageByAuthor(username, ctx.request));
  }

  private async begin(caller: TrendhooksPrincipal, route: string, params: Record<string, string>, query: ListQuery): Promise<PageContext> {
    const ctx = await this.pagination.begin(query, {
      route,
      customerId: caller.tenantId,
      params,
      planMaxPageSize: this.plans.limits(caller.plan).maxPageSize,
    });
    const anchor = ctx.request.after ?? ctx.request.before;
    // Only a cursor signed by an older build of this route could carry another shape.
    if (anchor && !isPostKeyset(anchor)) throw new AppError('INVALID_CURSOR', CURSOR_ERROR_MESSAGES.badPayload);
    return ctx;
  }
}

function toPaged(ctx: PageContext, rows: PostListItem[]): Paged<PostResource> {
  const page = ctx.nextOnly(rows, (p) => [p.createdAt.getTime(), p.id]);
  return new Paged(page.items.map(toPostResource), page.page);
}

export function parseSubredditParam(raw: string): string {
  if (!SUBREDDIT_INPUT.test(raw)) {
    throw new AppError('VALIDATION_ERROR', 'subreddit must be 3 to 21 letters, digits or underscores, not starting with an underscore (an r/ prefix is allowed)');
  }
  return normaliseSubreddit(raw);
}

export function parseUsernameParam(raw: string): string {
  if (!USERNAME_INPUT.test(raw)) {
    throw new AppError('VALIDATION_ERROR', 'username must be 3 to 20 letters, digits, underscores or hyphens (a u/ prefix is allowed)');
  }
  return normaliseUsername(raw);
}
