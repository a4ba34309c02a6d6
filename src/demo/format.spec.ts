import { EVENT_CATALOGUE } from '../events/catalogue';
import { deliveryLine, typeLabel } from './format';

describe('demo lines', () => {
  const example = { data: { ...EVENT_CATALOGUE['trends.surge'].example.data } as Record<string, unknown> };

  it('marks a test event after its type, and no real event', () => {
    expect(typeLabel('trends.surge', { ...example.data, test: true })).toBe('trends.surge (test)');
    expect(typeLabel('trends.surge', example.data)).toBe('trends.surge');
    expect(typeLabel('trends.surge', { ...example.data, test: 'true' })).toBe('trends.surge');
  });

  it("prints a test event's figures as its kind's, with the mark", () => {
    const line = deliveryLine({ type: 'trends.surge', subreddit: 'demo', data: { ...example.data, test: true }, msgId: 'msg_1', verified: true });
    expect(line).toContain('trends.surge (test) r/demo ');
    expect(line).toContain(EVENT_CATALOGUE['trends.surge'].describe(example.data));
  });
});
