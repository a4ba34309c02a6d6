import { EVENT_CATALOGUE, EVENT_KINDS, exampleFigures } from '../events/catalogue';
import { figuresFor } from './events';
import { CliError, UsageError } from './support';

/** The one error line `events emit` prints (describeFailure prints a CliError's message as it is). */
function failure(run: () => unknown): { type: string; message: string } {
  try {
    run();
  } catch (err) {
    return { type: (err as Error).constructor.name, message: (err as Error).message };
  }
  throw new Error('expected a failure');
}

describe('events emit: the figures it sends', () => {
  it.each([...EVENT_KINDS])('--example sends the documented example of %s, without the fields trendhooks fills in', (kind) => {
    const { event_id: _e, webhook_id: _w, subreddit: _s, ...figures } = EVENT_CATALOGUE[kind].example.data;
    expect(figuresFor(kind, { example: true })).toEqual(figures);
  });

  it('--data with --example changes only the fields it names', () => {
    expect(figuresFor('trends.surge', { example: true, data: '{"count": 42, "observed": 42}' })).toEqual({ ...exampleFigures('trends.surge'), count: 42, observed: 42 });
  });

  it('--data alone must carry every field of the kind', () => {
    const full = exampleFigures('trends.velocity');
    expect(figuresFor('trends.velocity', { data: JSON.stringify(full) })).toEqual(full);
    const missing = failure(() => figuresFor('trends.surge', { data: '{"count": 42}' }));
    expect(missing.type).toBe(CliError.name);
    expect(missing.message).toMatch(/^--data: trends\.surge requires "window_start", "window_end", .*"distinct_authors", .* and "previous_observed" \(--example fills in the documented example's\)$/);
    expect(missing.message).not.toContain('"count"');
  });

  it.each([
    ['{"count": 4.5}', '--data.count must be an integer'],
    ['{"seasonal": "yes"}', '--data.seasonal must be a boolean'],
    ['{"window_start": "yesterday"}', '--data.window_start must be an ISO 8601 date-time such as 2026-03-03T13:05:00.000Z'],
    ['{"lift": null}', '--data.lift must be a number'],
    ['{"subreddit_rank": 1}', '--data: trends.surge has no field "subreddit_rank"'],
    ['{"subreddit": "other"}', '--data.subreddit is filled in by --subreddit; leave it out of --data'],
    ['{"event_id": "evt_x"}', '--data.event_id is filled in by trendhooks (a new id per event, or --id); leave it out of --data'],
    ['{"webhook_id": "01KJSX4M8G0000000000000001"}', "--data.webhook_id is filled in by trendhooks (each delivery carries its webhook's id); leave it out of --data"],
    ['{"test": true}', '--data.test is filled in by trendhooks, on test events only (POST /v1/webhooks/{webhook_id}/test); leave it out of --data'],
    ['not json', '--data must be a JSON object'],
    ['[1, 2]', '--data must be a JSON object'],
    ['null', '--data must be a JSON object'],
  ])('refuses --data %s in one line naming the field', (data, message) => {
    expect(failure(() => figuresFor('trends.surge', { example: true, data }))).toEqual({ type: CliError.name, message });
  });

  it('checks the type of a list of strings', () => {
    expect(failure(() => figuresFor('trends.velocity', { example: true, data: '{"keywords": [1]}' })).message).toBe('--data.keywords must be an array of strings');
  });

  it('asks for --example or --data when given neither (a usage error)', () => {
    expect(failure(() => figuresFor('trends.rising', {}))).toEqual({
      type: UsageError.name,
      message: "the event's figures are needed: --example, or --data with every field of trends.rising's data",
    });
  });
});
