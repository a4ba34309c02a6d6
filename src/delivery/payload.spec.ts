import { buildDeliveryBody, deliveryBodyTemplate } from './payload';

const event = {
  id: 'evt_1',
  type: 'trend.spike',
  subreddit: 'rust',
  createdAt: new Date('2025-01-02T03:04:05.678Z'),
  data: { score: 42, ratio: 1.5, title: 'héllo' },
};

describe('buildDeliveryBody', () => {
  it('serialises type, timestamp, data{event_id, webhook_id, subreddit, ...figures} in that order', () => {
    expect(buildDeliveryBody(event, 'wh_1')).toBe(
      '{"type":"trend.spike","timestamp":"2025-01-02T03:04:05.678Z",' +
        '"data":{"event_id":"evt_1","webhook_id":"wh_1","subreddit":"rust","score":42,"ratio":1.5,"title":"héllo"}}',
    );
  });

  it('never lets figures overwrite the identifying keys', () => {
    const body = buildDeliveryBody(
      { ...event, data: { event_id: 'x', webhook_id: 'y', subreddit: 'z', score: 1 } },
      'wh_1',
    );
    expect(JSON.parse(body).data).toEqual({ event_id: 'evt_1', webhook_id: 'wh_1', subreddit: 'rust', score: 1 });
    expect(Object.keys(JSON.parse(body).data)).toEqual(['event_id', 'webhook_id', 'subreddit', 'score']);
  });

  it('marks a test event (an evt_test_ id) with test: true after the identifying keys, and no other event', () => {
    const test = { ...event, id: 'evt_test_01KJSX4M8G0000000000000002' };
    expect(Object.keys(JSON.parse(buildDeliveryBody(test, 'wh_1')).data)).toEqual(['event_id', 'webhook_id', 'subreddit', 'test', 'score', 'ratio', 'title']);
    expect(JSON.parse(buildDeliveryBody(test, 'wh_1')).data.test).toBe(true);
    expect(JSON.parse(buildDeliveryBody({ ...event, id: 'evt_testing' }, 'wh_1')).data).not.toHaveProperty('test');
  });

  it('never lets a figure named test mark an event, or unmark a test event', () => {
    expect(JSON.parse(buildDeliveryBody({ ...event, data: { test: true, score: 1 } }, 'wh_1')).data).toEqual({ event_id: 'evt_1', webhook_id: 'wh_1', subreddit: 'rust', score: 1 });
    const test = { ...event, id: 'evt_test_1', data: { test: false, score: 1 } };
    expect(JSON.parse(buildDeliveryBody(test, 'wh_1')).data).toEqual({ event_id: 'evt_test_1', webhook_id: 'wh_1', subreddit: 'rust', test: true, score: 1 });
  });

  it('keeps a "__proto__" figure as a plain key', () => {
    const data = JSON.parse('{"__proto__":{"polluted":true},"n":1}') as Record<string, unknown>;
    const parsed = JSON.parse(buildDeliveryBody({ ...event, data }, 'wh_1'));
    expect(Object.keys(parsed.data)).toEqual(['event_id', 'webhook_id', 'subreddit', '__proto__', 'n']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('is byte-identical for the same input (it is what gets signed)', () => {
    expect(buildDeliveryBody(event, 'wh_1')).toBe(buildDeliveryBody({ ...event, data: { ...event.data } }, 'wh_1'));
  });

  it('handles an event without figures', () => {
    const parsed = JSON.parse(buildDeliveryBody({ ...event, data: {} }, 'wh_2'));
    expect(parsed).toEqual({
      type: 'trend.spike',
      timestamp: '2025-01-02T03:04:05.678Z',
      data: { event_id: 'evt_1', webhook_id: 'wh_2', subreddit: 'rust' },
    });
  });

  it('rejects an invalid createdAt', () => {
    expect(() => buildDeliveryBody({ ...event, createdAt: new Date('nope') }, 'wh_1')).toThrow(Error);
  });
});

describe('deliveryBodyTemplate', () => {
  it('gives exactly what buildDeliveryBody gives, for every webhook', () => {
    const events = [
      event,
      { ...event, data: {} },
      { ...event, data: { 10: 'integer keys sort first', b: null, a: [1, { c: '"quoted"' }], event_id: 'dropped' } },
      { ...event, data: JSON.parse('{"__proto__":{"polluted":true},"n":1}') as Record<string, unknown> },
      { ...event, subreddit: 'wh_1', data: { webhook_id: 'wh_1', note: 'wh_1 "wh_1"' } },
      { ...event, id: 'evt_test_01KJSX4M8G0000000000000002', data: { test: false, score: 1 } },
    ];
    for (const e of events) {
      const bodyFor = deliveryBodyTemplate(e);
      for (const w of ['wh_1', '01JABCDEFGHJKMNPQRSTVWXYZ0', 'quote"and\\backslash', 'ünï']) expect(bodyFor(w)).toBe(buildDeliveryBody(e, w));
    }
  });
});
