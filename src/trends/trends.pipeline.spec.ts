import type { PostEntity } from '../posts/post.entity';
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

describe('TrendsPipeline: hours without data', () => {
  const MIN = 60_000;
  const BUCKET = 5 * MIN;
  const T0 = Date.UTC(2026, 0, 5); // a Monday
  const DAY_BUCKETS = 288;
  let n = 0;
  /** A steady subreddit's posts (4 per 5 minutes, by many authors) in buckets [from, to). */
  const steady = (from: number, to: number): PostEntity[] =>
    Array.from({ length: (to - from) * 4 }, (_, i) => {
      const at = new Date(T0 + (from + Math.floor(i / 4)) * BUCKET + (i % 4) * MIN);
      const id = `g${(n++).toString(36)}`;
      return { id, subreddit: 't', author: `user${n % 60}`, title: `steady talk ${n % 7} about usual things`, selftext: '', permalink: `/r/t/comments/${id}/`, score: 1, numComments: 0, createdAt: at, updatedAt: at } as PostEntity;
    });

  /** A pipeline whose store holds `history`, its clock at `nowBucket`; returns it and the event types it emits. */
  function pipeline(history: PostEntity[], nowBucket: number) {
    const emitted: string[] = [];
    const events = { emit: async (e: { type: string }) => (emitted.push(e.type), { created: true, deliveries: 0 }) } as unknown as EventsService;
    const store = { history: async () => history } as unknown as PostStore;
    const p = new TrendsPipeline(events, store, { now: () => new Date(T0 + nowBucket * BUCKET) }, { historyMs: 30 * 86_400_000 });
    return { p, emitted };
  }

  /** Posts of buckets [from, to) arriving an hour at a time, as polls bring them. */
  async function arrive(p: TrendsPipeline, from: number, to: number): Promise<void> {
    for (let b = from; b < to; b += 12) {
      const batch = steady(b, Math.min(b + 12, to));
      await p.onPostsUpserted(batch, { insertedIds: new Set(batch.map((x) => x.id)) });
    }
  }

  it('a hole the poller reports (markGap) is not learnt as silence: the posts after it fire no surge', async () => {
    const [holeFrom, holeTo] = [2 * DAY_BUCKETS, 5 * DAY_BUCKETS];
    const told = pipeline(steady(0, holeFrom), holeFrom);
    await told.p.markGap('t', T0 + holeFrom * BUCKET, T0 + holeTo * BUCKET);
    await arrive(told.p, holeTo, holeTo + DAY_BUCKETS);
    expect(told.emitted.filter((t) => t === 'trends.surge')).toEqual([]);
    // Not told, the same three days are zeros and the ordinary day after them reads as a surge.
    const untold = pipeline(steady(0, holeFrom), holeFrom);
    await arrive(untold.p, holeTo, holeTo + DAY_BUCKETS);
    expect(untold.emitted.filter((t) => t === 'trends.surge').length).toBeGreaterThan(0);
  });

  it('a hole in the stored history is a gap at warm-up too: the day after it fires no surge', async () => {
    const [holeFrom, holeTo] = [2 * DAY_BUCKETS, 5 * DAY_BUCKETS];
    // The store holds two days, nothing for three, then the first minutes after: a restart there.
    const history = [...steady(0, holeFrom), ...steady(holeTo, holeTo + 1)];
    const { p, emitted } = pipeline(history, holeTo + 1);
    await arrive(p, holeTo + 1, holeTo + DAY_BUCKETS);
    expect(emitted.filter((t) => t === 'trends.surge')).toEqual([]);
  });
});
