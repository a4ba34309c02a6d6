/**
 * Whether trendhooks can read a subreddit from Reddit, as a webhook shows it (`source_status`):
 *   ok          the last read succeeded
 *   pending     not read yet (a new subscription is read within seconds)
 *   private     Reddit answers 403 (private, or another restriction without a reason)
 *   quarantined Reddit answers 403 "quarantined" (app-only access cannot opt in)
 *   banned      Reddit answers 404 "banned"
 *   not_found   Reddit redirects the name to search, or answers 404 without a reason
 *   throttled   the last read ran out of retries on 429 (rate limited)
 *   error       the last read failed otherwise (5xx, timeout, network); retried with backoff
 */
export const SOURCE_STATUSES = ['ok', 'pending', 'private', 'quarantined', 'banned', 'not_found', 'throttled', 'error'] as const;
export type SourceStatus = (typeof SOURCE_STATUSES)[number];

/**
 * What the webhooks API asks about the subreddits its webhooks subscribe to. Provided by
 * TrendsModule (the `posts` feature) where it runs; without it a webhook's `source_status` is null.
 */
export abstract class SourceStatusReader {
  /** The status of each subreddit given (lower case), all of them tracked by a webhook. */
  abstract sourceStatuses(subreddits: readonly string[]): Promise<Map<string, SourceStatus>>;
}
