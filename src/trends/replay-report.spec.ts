import { dataSpan, DAY_MS, delayMinutes, eventOnset, formatDelay, PostView, StoryOnsets, summarize } from './replay-report';

const MIN = 60_000;
const T = Date.parse('2021-01-11T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

function post(id: string, minutes: number, title: string, subreddit = 'wsb'): PostView {
  return { id, subreddit, createdAtMs: T + minutes * MIN, title, selftext: '' };
}

describe('eventOnset', () => {
  const stories = new StoryOnsets([
    post('a', -400, 'Cohen once before'), // beyond the lookback and the chain
    post('b', -45, 'Ryan Cohen joins'), // 30 min before c: part of the chain
    post('c', -15, 'Cohen on the board'),
    post('d', -10, 'something else'),
    post('e', 5, 'Cohen!!'), // after the event
    post('f', -20, 'Cohen elsewhere', 'other'),
  ]);

  it("velocity: first_post_at when carried, else the story's first visible post", () => {
    const carried = eventOnset({ type: 'trends.velocity', subreddit: 'wsb', timeMs: T, data: { keyword: 'cohen', first_post_at: iso(T - 33 * MIN) } }, stories);
    expect(carried).toEqual({ onsetMs: T - 33 * MIN, from: 'first_post_at' });
    const seen = eventOnset({ type: 'trends.velocity', subreddit: 'wsb', timeMs: T, data: { keyword: 'cohen' } }, stories);
    expect(seen).toEqual({ onsetMs: T - 45 * MIN, from: 'first_visible_post' });
    expect(eventOnset({ type: 'trends.velocity', subreddit: 'wsb', timeMs: T, data: { keyword: 'nobody' } }, stories)).toBeNull();
    expect(eventOnset({ type: 'trends.velocity', subreddit: 'wsb', timeMs: T, data: { first_post_at: 'yesterday' } }, stories)).toBeNull();
  });

  it('the chain stops at a gap of more than 30 minutes', () => {
    const s = new StoryOnsets([post('a', -100, 'zeta'), post('b', -45, 'zeta'), post('c', -20, 'zeta')]);
    expect(s.firstPost('wsb', 'zeta', T)).toBe(T - 45 * MIN);
    expect(s.firstPost('wsb', 'zeta', T - 50 * MIN)).toBe(T - 100 * MIN);
  });

  it('surge: window_start; rising: created_at; unknown or malformed: null', () => {
    expect(eventOnset({ type: 'trends.surge', subreddit: 'wsb', timeMs: T, data: { window_start: iso(T - 20 * MIN) } })).toEqual({ onsetMs: T - 20 * MIN, from: 'window_start' });
    expect(eventOnset({ type: 'trends.surge', subreddit: 'wsb', timeMs: T, data: { window_start: 5 } })).toBeNull();
    expect(eventOnset({ type: 'trends.rising', subreddit: 'wsb', timeMs: T, data: { created_at: iso(T - MIN) } })).toEqual({ onsetMs: T - MIN, from: 'created_at' });
    expect(eventOnset({ type: 'trends.other', subreddit: 'wsb', timeMs: T, data: {} })).toBeNull();
  });
});

describe('dataSpan', () => {
  it('finds stretches with no post of 60 × the median spacing (at least 30 min) and leaves them out of the days', () => {
    // A post a minute for two hours, a 70-minute hole, two hours, a 3-day hole, an hour.
    const times = [...Array.from({ length: 121 }, (_, m) => m), ...Array.from({ length: 121 }, (_, m) => 190 + m), ...Array.from({ length: 61 }, (_, m) => 310 + 4320 + m)].map(
      (m) => T + m * MIN,
    );
    const span = dataSpan(times)!;
    expect(span.gaps).toEqual([
      { startMs: T + 120 * MIN, endMs: T + 190 * MIN },
      { startMs: T + 310 * MIN, endMs: T + (310 + 4320) * MIN },
    ]);
    expect(span.days).toBeCloseTo((120 + 120 + 60) / (24 * 60), 9);
    // 59 minutes is not 60 spacings; 30 min is the floor however dense the posts.
    expect(dataSpan([...Array.from({ length: 100 }, (_, m) => T + m * MIN), T + 158 * MIN])!.gaps).toEqual([]);
    expect(dataSpan([...Array.from({ length: 100 }, (_, m) => T + m * 1000), T + 99_000 + 31 * MIN])!.gaps).toHaveLength(1);
    expect(dataSpan([...Array.from({ length: 100 }, (_, m) => T + m * 1000), T + 99_000 + 29 * MIN])!.gaps).toHaveLength(0);
    expect(dataSpan([])).toBeNull();
    expect(dataSpan([T])!.days).toBe(0);
  });
});

describe('summarize', () => {
  it('counts events per kind and per day, with the median delay of those whose onset is known', () => {
    const s = summarize(
      [
        { type: 'trends.velocity', timeMs: T, delayMs: 10 * MIN },
        { type: 'trends.velocity', timeMs: T, delayMs: 30 * MIN },
        { type: 'trends.velocity', timeMs: T, delayMs: null },
        { type: 'trends.surge', timeMs: T, delayMs: 20 * MIN },
      ],
      2,
    );
    expect(s).toEqual({
      events: 4,
      days: 2,
      perDay: 2,
      byKind: {
        'trends.surge': { events: 1, perDay: 0.5, medianDelayMs: 20 * MIN },
        'trends.velocity': { events: 3, perDay: 1.5, medianDelayMs: 20 * MIN },
      },
    });
    expect(summarize([], 0)).toEqual({ events: 0, days: 0, perDay: null, byKind: {} });
  });
});

describe('formatting', () => {
  it('delays in words and minutes', () => {
    expect(formatDelay(25 * MIN + 20_000)).toBe('25 min');
    expect(formatDelay(100 * MIN)).toBe('1 h 40 min');
    expect(formatDelay(2 * 60 * MIN)).toBe('2 h');
    expect(formatDelay(-5 * MIN)).toBe('-5 min');
    expect(formatDelay(null)).toBe('?');
    expect(delayMinutes(25 * MIN + 6_000)).toBe(25.1);
    expect(delayMinutes(null)).toBeNull();
    expect(DAY_MS).toBe(86_400_000);
  });
});
