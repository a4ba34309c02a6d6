import type { SourceStatus } from '../webhooks/source-status';

/** What `trend_sources` says about one subreddit's reads. */
export interface SourceRecord {
  /** When the last successful read's listing started (epoch ms); null: never read. */
  lastPolledAt: number | null;
  /** Error class of the last read (`unavailable_403_private`, `http_503`, …); null after a success. */
  lastError: string | null;
  consecutiveFailures: number;
  /** Not read again before this (epoch ms). */
  nextPollAt: number | null;
  /** Posts estimated lost behind Reddit's 1,000-item listing cap after gaps in the reads, all told. */
  postsUnreachable?: number;
}

/**
 * `last_error` of a subreddit Reddit refuses: the status and, when Reddit gave one, its reason
 * (`unavailable_403_private`, `unavailable_404_banned`, `unavailable_302`).
 */
export function unavailableErrorClass(status: number, reason: string | null): string {
  return `unavailable_${status}${reason ? `_${reason}` : ''}`;
}

/** Whether a recorded error says Reddit refuses the subreddit (as opposed to a failed read). */
export function isUnavailable(lastError: string | null): boolean {
  return lastError?.startsWith('unavailable_') ?? false;
}

/** The status a subreddit's record means (src/webhooks/source-status.ts lists them); no record: pending. */
export function sourceStatusOf(r: Pick<SourceRecord, 'lastPolledAt' | 'lastError'> | undefined): SourceStatus {
  if (!r || (r.lastError === null && r.lastPolledAt === null)) return 'pending';
  const e = r.lastError;
  if (e === null) return 'ok';
  const refused = /^unavailable_(\d{3})(?:_([a-z0-9_]+))?$/.exec(e);
  if (refused) {
    const [status, reason] = [Number(refused[1]), refused[2] ?? null];
    if (reason === 'quarantined') return 'quarantined';
    if (reason === 'banned') return 'banned';
    if (reason === 'private') return 'private';
    if (status >= 300 && status < 400) return 'not_found';
    // 403 without a known reason is a restriction all the same; 404 without one, a name Reddit does not know.
    return status === 403 ? 'private' : 'not_found';
  }
  if (e === 'http_429') return 'throttled';
  return 'error';
}
