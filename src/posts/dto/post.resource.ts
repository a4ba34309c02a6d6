import { ApiProperty, ApiSchema } from '../../openapi/swagger';
import { isoString } from '../../common/iso-time';
import type { PostListItem } from '../post.store';

export const REDDIT_ORIGIN = 'https://www.reddit.com';

/** The client's view of a post (README "Post fields"). */
@ApiSchema({ name: 'Post', description: 'A stored Reddit post, as last ingested.' })
export class PostResource {
  @ApiProperty({ description: "Reddit's base-36 id.", example: '1abc2d' })
  id: string;

  /** Reddit fullname, `t3_` + id. */
  @ApiProperty({ description: 'Reddit fullname, `t3_` + id.', example: 't3_1abc2d' })
  name: string;

  @ApiProperty({ description: 'Lower case.', example: 'typescript' })
  subreddit: string;

  @ApiProperty({ description: 'As Reddit spells it; `[deleted]` when gone.' })
  author: string;

  @ApiProperty()
  title: string;

  @ApiProperty({ description: 'Empty for link posts.' })
  selftext: string;

  @ApiProperty()
  url: string;

  /** Absolute, so clients can link it as is. */
  @ApiProperty({ format: 'uri', example: 'https://www.reddit.com/r/typescript/comments/1abc2d/title/' })
  permalink: string;

  @ApiProperty({ type: 'integer', description: 'As last ingested.' })
  score: number;

  @ApiProperty({ type: 'integer', description: 'As last ingested.' })
  num_comments: number;

  @ApiProperty({ format: 'date-time', description: "Reddit's created_utc, ISO 8601 UTC with milliseconds." })
  created_at: string;
}

export function toPostResource(p: PostListItem): PostResource {
  return {
    id: p.id,
    name: `t3_${p.id}`,
    subreddit: p.subreddit,
    author: p.author,
    title: p.title,
    selftext: p.selftext,
    url: p.url,
    permalink: REDDIT_ORIGIN + p.permalink,
    score: p.score,
    num_comments: p.numComments,
    created_at: isoString(p.createdAt),
  };
}
