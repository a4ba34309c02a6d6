import { AppError } from '../common/errors';
import { toEventResource } from './dto/event.resource';
import { eventsFilterParams, parseEventsFilter } from './events-filter';
import { historySubscriptions } from './events-history.service';

describe('parseEventsFilter', () => {
  it('reads a kind, a subreddit (r/ stripped, lower-cased) and an instant; nothing given is no filter', () => {
    expect(parseEventsFilter({})).toEqual({});
    const f = parseEventsFilter({ event: 'trends.surge', subreddit: 'r/TypeScript', since: '2026-11-28T09:00:00+01:00' });
    expect(f).toEqual({ event: 'trends.surge', subreddit: 'typescript', since: new Date('2026-11-28T08:00:00Z') });
    expect(eventsFilterParams(f)).toEqual({ event: 'trends.surge', subreddit: 'typescript', since: '2026-11-28T08:00:00.000Z' });
    expect(eventsFilterParams({})).toEqual({});
  });

  it.each([
    [{ event: 'webhook.test' }, 'event must be one of'],
    [{ event: ['trends.surge', 'trends.rising'] }, 'event must be given once'],
    [{ subreddit: '_x_y' }, 'subreddit must be'],
    [{ subreddit: 'r/' }, 'subreddit must be'],
    [{ since: '2026-11-28' }, 'since must be an ISO 8601'],
    [{ since: '' }, 'since must be an ISO 8601'],
  ])('refuses %j with VALIDATION_ERROR', (query, message) => {
    expect(() => parseEventsFilter(query)).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR', message: expect.stringContaining(message) }) as AppError);
  });
});

describe('historySubscriptions', () => {
  const at = new Date('2026-11-01T00:00:00Z');
  const subs = [
    { event: 'trends.surge', subreddit: 'rust', since: at },
    { event: 'trends.rising', subreddit: 'rust', since: at },
    { event: 'trends.surge', subreddit: 'go', since: at },
    { event: '', subreddit: '', since: at }, // a host endpoint's row: no kind
  ];

  it('keeps trend kinds only, narrowed by the filter, each from its own start', () => {
    expect(historySubscriptions(subs, {})).toEqual([
      { type: 'trends.surge', subreddit: 'rust', from: at },
      { type: 'trends.rising', subreddit: 'rust', from: at },
      { type: 'trends.surge', subreddit: 'go', from: at },
    ]);
    expect(historySubscriptions(subs, { event: 'trends.surge', subreddit: 'go' })).toEqual([{ type: 'trends.surge', subreddit: 'go', from: at }]);
    expect(historySubscriptions(subs, { subreddit: 'python' })).toEqual([]);
    expect(historySubscriptions(subs, { event: 'trends.velocity' })).toEqual([]);
  });
});

describe('toEventResource', () => {
  it("is the delivered body's data without webhook_id; a figure named like a reserved key never replaces it", () => {
    const createdAt = new Date('2026-11-28T07:00:00.123Z');
    expect(toEventResource({ id: 'evt_1', type: 'trends.surge', subreddit: 'rust', payload: '{"score":2,"event_id":"x","webhook_id":"y","subreddit":"z","__proto__":1}', createdAt })).toEqual({
      id: 'evt_1',
      type: 'trends.surge',
      subreddit: 'rust',
      created_at: '2026-11-28T07:00:00.123Z',
      data: JSON.parse('{"event_id":"evt_1","subreddit":"rust","score":2,"__proto__":1}'),
    });
  });
});
