import { DEFAULT_RISING_PARAMS } from './params';
import type { RisingDetection } from '../../events/kinds/rising';
import { createRisingState, observeRising, RisingObservation, RisingState } from './rising';

const MIN = 60_000;
const HOUR = 60 * MIN;
const T0 = Date.UTC(2024, 0, 1);

function obs(postId: string, createdUtcMs: number, observedAtMs: number, score: number, numComments = 0): RisingObservation {
  return { postId, createdUtcMs, observedAtMs, score, numComments, permalink: `/r/t/comments/${postId}/`, title: `title ${postId}` };
}

/**
 * A warmed-up subreddit: `n` ordinary posts created a minute apart, each re-read 15 and 30 minutes
 * after creation, gaining a few points per hour.
 */
function warmState(n = 300): { state: RisingState; now: number } {
  const state = createRisingState();
  let now = T0;
  for (let i = 0; i < n; i++) {
    const created = T0 + i * MIN;
    const gain = i % 5; // 0–4 points per quarter hour: 0–16 points/h
    observeRising(state, obs(`n${i}`, created, created + 15 * MIN, 1));
    expect(observeRising(state, obs(`n${i}`, created, created + 30 * MIN, 1 + gain))).toBeNull();
    now = created + 30 * MIN;
  }
  return { state, now };
}

describe('trends.rising detector', () => {
  it('ordinary posts never fire', () => {
    const { state } = warmState(600);
    expect(state.fired.size).toBe(0);
  });

  it('fires for a post climbing far faster than the norm, with evidence', () => {
    const { state, now } = warmState();
    const created = now - 20 * MIN;
    expect(observeRising(state, obs('viral', created, now, 5, 1))).toBeNull(); // first sighting: no rate yet
    const d = observeRising(state, obs('viral', created, now + 15 * MIN, 205, 21)) as RisingDetection;
    expect(d).not.toBeNull();
    expect(d).toMatchObject({
      kind: 'trends.rising',
      postId: 'viral',
      permalink: '/r/t/comments/viral/',
      title: 'title viral',
      ageMinutes: 35,
      scorePerHour: 800,
      commentsPerHour: 80,
      growthPerHour: 800 + DEFAULT_RISING_PARAMS.commentWeight * 80,
      score: 205,
      observedAt: now + 15 * MIN,
      threshold: DEFAULT_RISING_PARAMS.threshold,
    });
    expect(d.baselinePerHour).toBeLessThan(20);
    expect(d.zScore).toBeGreaterThanOrEqual(DEFAULT_RISING_PARAMS.threshold);
  });

  it('fires at most once per post', () => {
    const { state, now } = warmState();
    const created = now - 10 * MIN;
    observeRising(state, obs('p', created, now, 1));
    const fired: (RisingDetection | null)[] = [];
    for (let k = 1; k <= 10; k++) fired.push(observeRising(state, obs('p', created, now + k * 15 * MIN, 1 + k * 300)));
    expect(fired.filter((d) => d !== null)).toHaveLength(1);
  });

  it('needs the minimum gap between observations and the minimum absolute growth', () => {
    const { state, now } = warmState();
    const created = now - 10 * MIN;
    observeRising(state, obs('gap', created, now, 1));
    // 2 minutes later: too close, ignored (anchor kept)
    expect(observeRising(state, obs('gap', created, now + 2 * MIN, 100))).toBeNull();
    // slow: 4 points in 15 minutes = 16/h < 20/h
    observeRising(state, obs('slow', created, now, 1));
    expect(observeRising(state, obs('slow', created, now + 15 * MIN, 5))).toBeNull();
    // the gap post, measured from its kept anchor, is fast
    expect(observeRising(state, obs('gap', created, now + 15 * MIN, 200))).not.toBeNull();
  });

  it('ignores posts older than 12 hours', () => {
    const { state, now } = warmState();
    const created = now - 13 * HOUR;
    observeRising(state, obs('old', created, now, 1));
    expect(observeRising(state, obs('old', created, now + 15 * MIN, 5000))).toBeNull();
    expect(state.posts.has('old')).toBe(false);
  });

  it('does not fire before the norm is warm', () => {
    const state = createRisingState();
    observeRising(state, obs('early', T0, T0 + 10 * MIN, 1));
    expect(observeRising(state, obs('early', T0, T0 + 25 * MIN, 5000))).toBeNull();
  });

  it('ignores replays (observations not newer than the anchor)', () => {
    const { state, now } = warmState();
    const created = now - 10 * MIN;
    observeRising(state, obs('r', created, now, 1));
    const samples = state.samples;
    expect(observeRising(state, obs('r', created, now, 1000))).toBeNull();
    expect(observeRising(state, obs('r', created, now - MIN, 1000))).toBeNull();
    expect(state.samples).toBe(samples);
  });

  it('memory stays bounded when fed 100,000 posts', () => {
    const state = createRisingState();
    let maxTracked = 0;
    for (let i = 0; i < 100_000; i++) {
      const created = T0 + i * 2_000; // a post every 2 s: 21,600 per 12 h
      observeRising(state, obs(`b${i}`, created, created + MIN, 1));
      observeRising(state, obs(`b${i}`, created, created + 16 * MIN, i % 997 === 0 ? 5000 : 3));
      maxTracked = Math.max(maxTracked, state.posts.size + state.fired.size);
    }
    expect(state.posts.size).toBeLessThanOrEqual(DEFAULT_RISING_PARAMS.maxTrackedPosts);
    expect(state.fired.size).toBeLessThanOrEqual(DEFAULT_RISING_PARAMS.maxTrackedPosts);
    expect(state.postQueue.length).toBeLessThanOrEqual(2 * DEFAULT_RISING_PARAMS.maxTrackedPosts + 1024);
    expect(maxTracked).toBeLessThanOrEqual(2 * DEFAULT_RISING_PARAMS.maxTrackedPosts);
    // Fired ids are forgotten once their posts are older than 12 h.
    for (const created of state.fired.values()) expect(created).toBeGreaterThanOrEqual(state.watermark - 12 * HOUR - MIN);
  });

  it('validates observations and parameters', () => {
    const state = createRisingState();
    expect(() => observeRising(state, obs('x', NaN, T0, 1))).toThrow(RangeError);
    expect(() => createRisingState({ normUpperQuantile: 0.3 })).toThrow(/normUpperQuantile/);
  });
});
