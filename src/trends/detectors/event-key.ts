/**
 * Deterministic identity of a trend event: replaying the same input yields the same key, so the
 * service can derive event ids from it and a replay emits no duplicates.
 */
import { EventKind, isEventKind } from '../../events/catalogue';

/**
 * `v1:<kind>:<subreddit>:<windowStartMs>:<discriminator>`, each part percent-encoded so no part can
 * contain the separator. Subreddit names are case-insensitive on Reddit, so they are lower-cased.
 * Each kind says what its window start and discriminator are (`identity` in src/events/kinds/).
 */
export function eventKey(kind: EventKind, subreddit: string, windowStartMs: number, discriminator: string): string {
  if (!isEventKind(kind)) throw new RangeError(`unknown trend kind: ${String(kind)}`);
  if (typeof subreddit !== 'string' || subreddit.length === 0) throw new RangeError('subreddit must be a non-empty string');
  if (!Number.isSafeInteger(windowStartMs)) throw new RangeError('windowStartMs must be an integer (ms since epoch)');
  if (typeof discriminator !== 'string') throw new RangeError('discriminator must be a string');
  return ['v1', kind, subreddit.toLowerCase(), String(windowStartMs), discriminator].map(encodeURIComponent).join(':');
}
