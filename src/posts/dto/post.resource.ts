import type { PostEntity } from '../post.entity';

export const REDDIT_ORIGIN = 'https://www.reddit.com';

/** The client's view of a post (README "Post fields"). */
export interface PostResource {
  id: string;
  /** Reddit fullname, `t3_` + id. */
  name: string;
  subreddit: string;
  author: string;
  title: string;
  selftext: string;
  url: string;
  /** Absolute, so clients can link it as is. */
  permalink: string;
  score: number;
  num_comments: number;
  created_at: string;
}

export function toPostResource(p: PostEntity): PostResource {
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
    created_at: p.createdAt.toISOString(),
  };
}
