import type { RedditPost } from '../posts/reddit-parse';
import { replayPosts } from './replay';

const MIN = 60_000;
const BUCKET = 5 * MIN;
const T0 = Date.UTC(2026, 0, 5); // a Monday
const DAY_BUCKETS = 288;

/** A steady subreddit's posts (4 per 5 minutes, by many authors) in buckets [from, to). */
function steady(from: number, to: number): RedditPost[] {
  return Array.from({ length: (to - from) * 4 }, (_, i) => {
    const b = from + Math.floor(i / 4);
    const id = `r${b.toString(36)}x${i % 4}`;
    return { id, subreddit: 't', author: `user${(b * 4 + i) % 60}`, title: `steady talk ${i % 7} about usual things`, selftext: '', url: '', permalink: `/r/t/comments/${id}/`, score: 1, numComments: 0, createdAtMs: T0 + b * BUCKET + (i % 4) * MIN };
  });
}

describe('replayPosts', () => {
  it("takes a file's hole for missing data, not silence: the day after it fires no surge", () => {
    // Two steady days, three days missing from the file, one more steady day.
    const posts = [...steady(0, 2 * DAY_BUCKETS), ...steady(5 * DAY_BUCKETS, 6 * DAY_BUCKETS)];
    const replay = replayPosts(posts);
    expect(replay.events.filter((e) => e.type === 'trends.surge')).toEqual([]);
    expect(replay.posts).toEqual({ t: posts.length });
  });
});
