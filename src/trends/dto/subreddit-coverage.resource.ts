import { ApiProperty, ApiSchema } from '../../openapi/swagger';
import { isoString } from '../../common/iso-time';
import { SOURCE_STATUSES, SourceStatus } from '../../webhooks/source-status';
import type { SourceRecord } from '../coverage';

export const SUBREDDIT_COVERAGE_STATUSES = [...SOURCE_STATUSES, 'untracked'] as const;
export type SubredditCoverageStatus = (typeof SUBREDDIT_COVERAGE_STATUSES)[number];

/** `GET /v1/subreddits/{subreddit}`: whether trendhooks can read the subreddit, and when it last did. */
@ApiSchema({ name: 'Subreddit', description: 'Whether trendhooks can read a subreddit from Reddit, and when it last did.' })
export class SubredditCoverageResource {
  @ApiProperty({ description: 'Lower case, without the r/ prefix.', example: 'typescript' })
  subreddit: string;

  @ApiProperty({ description: 'Whether trendhooks reads it for the caller: one of the caller\'s webhooks subscribes to it, or the operator tracks it for everyone (TRACKED_SUBREDDITS). Other customers\' webhooks do not count.' })
  tracked: boolean;

  @ApiProperty({
    enum: SUBREDDIT_COVERAGE_STATUSES,
    enumName: 'SubredditStatus',
    description:
      '`ok`: the last read succeeded. `pending`: tracked, not read yet. `private`: Reddit answers 403 (private or otherwise restricted). `quarantined`: 403, quarantined. ' +
      '`banned`: 404, banned. `not_found`: Reddit does not know the name. `throttled`: the last read ran out of retries on Reddit\'s rate limit. ' +
      '`error`: the last read failed otherwise (Reddit down, a timeout). `untracked`: none of the caller\'s webhooks subscribes to it (and the operator does not track it); nothing of earlier reads is shown then.',
  })
  status: SubredditCoverageStatus;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When the last successful read started; null if never, or untracked.' })
  last_read_at: string | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'What the last read met (`unavailable_403_private`, `unavailable_404_banned`, `unavailable_302`, `http_429`, `http_503`, `timeout`, …); null after a success.',
    example: 'unavailable_403_private',
  })
  last_error: string | null;

  @ApiProperty({ type: 'integer', description: 'Failed reads in a row.' })
  consecutive_failures: number;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'Not read again before this (the poll interval; after failures a backoff, 30 min to 4 h for a subreddit Reddit refuses); null when untracked or never read.',
  })
  next_read_at: string | null;

  @ApiProperty({
    type: 'integer',
    description:
      "Posts estimated lost, all told: after a gap in the reads (an outage, a long backoff) longer than Reddit's newest 1,000 posts of the subreddit reach, the posts older than those could not be listed. 0 when none.",
  })
  posts_unreachable: number;
}

export function toSubredditCoverageResource(subreddit: string, tracked: boolean, status: SourceStatus | 'untracked', r: SourceRecord | undefined): SubredditCoverageResource {
  const at = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : isoString(new Date(ms)));
  return {
    subreddit,
    tracked,
    status,
    last_read_at: at(r?.lastPolledAt),
    last_error: r?.lastError ?? null,
    consecutive_failures: r?.consecutiveFailures ?? 0,
    next_read_at: tracked ? at(r?.nextPollAt) : null,
    posts_unreachable: r?.postsUnreachable ?? 0,
  };
}
