/**
 * Deterministic identity of a trend event: replaying the same input yields the same key, so the
 * service can derive event ids from it and a replay emits no duplicates.
 */


/** The trend kinds, defined here once: webhooks subscribe to them and events carry them as `type`. */
export const TREND_KINDS = ['trends.surge', 'trends.velocity', 'trends.rising'] as const;
export type TrendKind = (typeof TREND_KINDS)[number];

/**
 * `v1:<kind>:<subreddit>:<windowStartMs>:<discriminator>`, each part percent-encoded so no part can
 * contain the separator. Subreddit names are case-insensitive on Reddit, so they are lower-cased.
 *
 * What to pass as windowStartMs / discriminator:
 * - surge: detection.bucketStart, ''
 * - velocity: detection.bucketStart, detection.keyword
 * - rising: the post's createdUtcMs, the post id (stable whichever re-read fires, so "once per post")
 */
export function eventKey(kind: TrendKind, subreddit: string, windowStartMs: number, discriminator: string): string {
  if (!TREND_KINDS.includes(kind)) throw new RangeError(`unknown trend kind: ${String(kind)}`);
  if (typeof subreddit !== 'string' || subreddit.length === 0) throw new RangeError('subreddit must be a non-empty string');
  if (!Number.isSafeInteger(windowStartMs)) throw new RangeError('windowStartMs must be an integer (ms since epoch)');
  if (typeof discriminator !== 'string') throw new RangeError('discriminator must be a string');
  return ['v1', kind, subreddit.toLowerCase(), String(windowStartMs), discriminator].map(encodeURIComponent).join(':');
}
