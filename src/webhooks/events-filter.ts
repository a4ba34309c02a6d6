import { AppError } from '../common/errors';
import { normaliseSubreddit, SUBREDDIT_INPUT } from '../common/reddit-names';
import { EVENT_KINDS, EventKind, isEventKind } from '../events/catalogue';
import { parseInstant } from './delivery-filters';

/** The events history's filter query parameters, as they arrive. */
export interface EventsFilterQuery {
  event?: unknown;
  subreddit?: unknown;
  since?: unknown;
}

export interface EventsFilter {
  event?: EventKind;
  subreddit?: string;
  since?: Date;
}

function single(name: string, v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new AppError('VALIDATION_ERROR', `${name} must be given once`);
  return v;
}

/**
 * `event`, `subreddit` and `since` of `GET /v1/events`: a trend kind, a subreddit name (an r/
 * prefix stripped, lower-cased, as webhooks store it) and an ISO 8601 instant with a zone.
 * Anything else is VALIDATION_ERROR naming the parameter.
 */
export function parseEventsFilter(query: EventsFilterQuery): EventsFilter {
  const out: EventsFilter = {};
  const event = single('event', query.event);
  if (event !== undefined) {
    if (!isEventKind(event)) throw new AppError('VALIDATION_ERROR', `event must be one of ${EVENT_KINDS.join(', ')}`);
    out.event = event;
  }
  const subreddit = single('subreddit', query.subreddit);
  if (subreddit !== undefined) {
    if (!SUBREDDIT_INPUT.test(subreddit)) throw new AppError('VALIDATION_ERROR', 'subreddit must be 3 to 21 letters, digits or underscores, not starting with an underscore (an r/ prefix is allowed)');
    out.subreddit = normaliseSubreddit(subreddit);
  }
  const since = single('since', query.since);
  if (since !== undefined) {
    const at = parseInstant(since);
    if (!at) throw new AppError('VALIDATION_ERROR', 'since must be an ISO 8601 date and time with a zone, e.g. 2026-11-28T07:00:00Z');
    out.since = at;
  }
  return out;
}

/** The filter as cursor parameters: a cursor is bound to the filters it was issued with. */
export function eventsFilterParams(filter: EventsFilter): Record<string, string> {
  const p: Record<string, string> = {};
  if (filter.event !== undefined) p.event = filter.event;
  if (filter.subreddit !== undefined) p.subreddit = filter.subreddit;
  if (filter.since) p.since = filter.since.toISOString();
  return p;
}
