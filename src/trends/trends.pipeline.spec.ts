import type { PostStore } from '../posts/post.store';
import type { Clock } from '../common/clock';
import type { EventsService } from '../delivery/events.service';
import { TrendsPipeline } from './trends.pipeline';

describe('TrendsPipeline', () => {
  const clock: Clock = { now: () => new Date(0) };
  const make = (params: object) => new TrendsPipeline({} as EventsService, {} as PostStore, clock, { params });

  it('refuses bad detector parameters when it is built, naming the parameter', () => {
    expect(() => make({ surge: { windowBuckets: 1 } })).toThrow(/shortWindowBuckets/);
    expect(() => make({ velocity: { bucketMs: -1 } })).toThrow(/bucketMs/);
    expect(() => make({ rising: { minGapMs: -1 } })).toThrow(/minGapMs/);
  });

  it('accepts the defaults and valid overrides', () => {
    expect(() => make({})).not.toThrow();
    expect(() => make({ surge: { shortWindowBuckets: 0, windowBuckets: 1 } })).not.toThrow();
  });
});
