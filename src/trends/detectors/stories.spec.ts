import type { VelocityDetection } from '../../events/kinds/velocity';
import { mulberry32 as rng } from '../../common/prng';
import { eventKey } from './event-key';
import { DEFAULT_STORY_PARAMS } from './params';
import { createStoryState, observeStoryPosts, poissonDeviance, StoryState, storyText } from './stories';
import type { VelocityPost } from './velocity';

const MIN = 60_000;
const HOUR = 60 * MIN;
const STEP = DEFAULT_STORY_PARAMS.bucketMs;
const T0 = Date.UTC(2024, 0, 1);

/** 600 pseudo-words with Zipf frequencies, and everyday words each in a few percent of titles. */
const VOCAB = Array.from({ length: 600 }, (_, i) => `bw${i.toString(36)}q`);
const EVERYDAY = ['monday', 'tomorrow', 'dip', 'nice'];

interface Post extends VelocityPost {
  createdAtMs: number;
}

let nextId = 0;
const newId = () => `p${(nextId++).toString(36)}`;

/** A subreddit's ordinary posts: `perHour` a hour from 3,000 authors, from `from` for `hours`. */
function background(seed: number, from: number, hours: number, perHour = 180): Post[] {
  const r = rng(seed);
  const out: Post[] = [];
  const n = Math.round(hours * perHour);
  for (let i = 0; i < n; i++) {
    const words = Array.from({ length: 6 }, () => VOCAB[Math.floor(Math.pow(r(), 2) * VOCAB.length)]);
    for (const w of EVERYDAY) if (r() < 0.03) words.push(w);
    out.push({ id: newId(), title: words.join(' '), author: `user${Math.floor(r() * 3000)}`, createdAtMs: from + Math.floor((i / n) * hours * HOUR) });
  }
  return out;
}

/** `authors` people posting about `word` from `at`, one every `everyMs`. */
function story(word: string, at: number, authors: number, everyMs: number, who = (k: number) => `${word}_fan${k}`): Post[] {
  return Array.from({ length: authors }, (_, k) => ({ id: newId(), title: `${word} ${VOCAB[(k * 37) % 600]} ${VOCAB[(k * 11 + 5) % 600]}`, author: who(k), createdAtMs: at + k * everyMs }));
}

/** Feeds the posts step by step (as the pipeline does); detections with the step they fired at. */
function run(posts: Post[], state: StoryState = createStoryState()): VelocityDetection[] {
  const sorted = [...posts].sort((a, b) => a.createdAtMs - b.createdAtMs);
  const out: VelocityDetection[] = [];
  let i = 0;
  while (i < sorted.length) {
    const start = Math.floor(sorted[i].createdAtMs / STEP) * STEP;
    const batch: Post[] = [];
    while (i < sorted.length && sorted[i].createdAtMs < start + STEP) batch.push(sorted[i++]);
    out.push(...observeStoryPosts(state, start, batch));
  }
  return out;
}

/** Two quiet days, then `hours` more of background: the stories are planted after the warm-up. */
const WARM = T0 + 48 * HOUR;
const day = (seed: number, hours = 6, perHour?: number) => [...background(seed, T0, 48, perHour), ...background(seed + 1, WARM, hours, perHour)];

describe('trends.velocity stories', () => {
  it('stays silent on an ordinary subreddit', () => {
    expect(run(day(1, 24))).toEqual([]);
  });

  it('fires within 30 minutes of the first post of a 10-author story, saying when that was', () => {
    const at = WARM + 2 * HOUR + 7 * MIN;
    const fired = run([...day(2), ...story('zorvex', at, 10, 2 * MIN)]);
    expect(fired).toHaveLength(1);
    expect(fired[0]).toMatchObject({ keyword: 'zorvex', firstPostAt: at, distinctAuthors: fired[0].count });
    expect(fired[0].bucketEnd - at).toBeLessThanOrEqual(30 * MIN);
    expect(fired[0].distinctAuthors).toBeGreaterThanOrEqual(5);
    expect(fired[0].bucketEnd - fired[0].bucketStart).toBe(DEFAULT_STORY_PARAMS.windowMs);
  });

  it('judges a word with enough authors at every step, so it fires when a busy hour leaves the window without a new post of its own', () => {
    // Five authors right after ten minutes twelve times busier than usual: short of the bar while
    // the busy posts are in the window, over it once they have left (the five are still inside).
    const burst = WARM + 2 * HOUR;
    const at = burst + 10 * MIN;
    const posts = [...day(11), ...background(12, burst, 1 / 6, 2160), ...story('quorvel', at, 5, MIN)];
    const fired = run(posts);
    expect(fired.map((d) => d.keyword)).toEqual(['quorvel']);
    const lastOwnPost = at + 4 * MIN;
    expect(fired[0].bucketEnd).toBeGreaterThan(burst + DEFAULT_STORY_PARAMS.windowMs);
    expect(fired[0].bucketEnd).toBeLessThanOrEqual(lastOwnPost + DEFAULT_STORY_PARAMS.windowMs);
    expect(fired[0]).toMatchObject({ firstPostAt: at, distinctAuthors: 5 });
  });

  it('reports concurrent stories apart, each once, with distinct keys, on a busy day', () => {
    const at = WARM + 2 * HOUR;
    const busy = day(3, 6, 600);
    const stories = ['qoran', 'vextil', 'BZQT', 'mulvar', 'drakos'].flatMap((w, i) => story(w, at + i * 3 * MIN, 12 + i * 6, 90_000));
    const fired = run([...busy, ...stories]);
    expect(fired.map((d) => d.keyword).sort()).toEqual(['bzqt', 'drako', 'mulvar', 'qoran', 'vextil']);
    const keys = fired.map((d) => eventKey('trends.velocity', 'test', d.firstPostAt, d.keyword));
    expect(new Set(keys).size).toBe(5);
  });

  it('a story that goes on for hours fires once, and words of the same posts ride in its event', () => {
    const at = WARM + HOUR;
    const posts = Array.from({ length: 80 }, (_, k) => ({ id: newId(), title: `Josh Brown shouts out the sub ${VOCAB[k % 600]}`, author: `viewer${k}`, createdAtMs: at + k * 3 * MIN }));
    const fired = run([...day(4), ...posts]);
    expect(fired).toHaveLength(1);
    expect(fired[0].keywords).toEqual(expect.arrayContaining(['josh', 'brown']));
  });

  it('ignores [deleted] and [removed] texts, and deleted accounts do not pass for authors', () => {
    expect(storyText('[deleted]')).toBe('');
    expect(storyText(' [removed] ')).toBe('');
    expect(storyText('[deleted by user]')).toBe('');
    expect(storyText('deleted my position')).toBe('deleted my position');
    const at = WARM + HOUR;
    const placeholders = Array.from({ length: 40 }, (_, k) => ({ id: newId(), title: k % 2 ? '[deleted]' : '[removed]', selftext: '[deleted]', author: `gone${k}`, createdAtMs: at + k * MIN }));
    // Deleted accounts written as one stand-in per post (`u_del:<id>`), reposting one title.
    const standIns = Array.from({ length: 12 }, (_, k) => ({ id: newId(), title: 'Papa Quorvix carrying us', author: `u_del:x${k}`, createdAtMs: at + k * MIN }));
    expect(run([...day(5), ...placeholders, ...standIns])).toEqual([]);
  });

  it('everyday words need far more authors than a new name', () => {
    const at = WARM + 2 * HOUR;
    // 15 people saying "monday" within half an hour, against its usual 3 % of posts: not news.
    expect(run([...day(6), ...story('monday', at, 15, 2 * MIN)])).toEqual([]);
    expect(run([...day(6), ...story('dip', at, 15, 2 * MIN)])).toEqual([]);
    // The same 15 people about a name nobody used before: a story.
    expect(run([...day(6), ...story('zentrix', at, 15, 2 * MIN)]).map((d) => d.keyword)).toEqual(['zentrix']);
    // The everyday word fires only on many times its usual count.
    expect(run([...day(6), ...story('monday', at, 90, 20_000)]).map((d) => d.keyword)).toEqual(['monday']);
  });

  it('never fires on a flood of one or two accounts, however long', () => {
    const at = WARM + HOUR;
    for (const accounts of [1, 2]) {
      const flood = story('pumpzor', at, 60, MIN, (k) => `spammer${k % accounts}`);
      expect(run([...day(7), ...flood])).toEqual([]);
    }
    // Deleted accounts reposting one title are one source.
    expect(run([...day(7), ...story('pumpzor', at, 60, MIN, () => '[deleted]').map((p) => ({ ...p, title: 'pumpzor to the moon' }))])).toEqual([]);
  });

  it('counts the reworded reposts of one deleted account once where titles are all there is, and different titles apart', () => {
    const at = WARM + HOUR;
    const deleted = (posts: Post[]) => posts.map((p) => ({ ...p, author: '[deleted]' }));
    const words = ['pumpzor', 'quarrel', 'melinda', 'billfold', 'tendie', 'portfolio', 'lithium', 'vicechair', 'gorillas', 'peanuts', 'valhalla'];
    // One account, twelve posts in 24 minutes, each leaving out another word of one long title.
    const reworded = Array.from({ length: 12 }, (_, k) => ({ id: newId(), title: words.filter((_, i) => i === 0 || i !== 1 + (k % 10)).join(' '), author: '[deleted]', createdAtMs: at + k * 2 * MIN }));
    expect(run(deleted([...day(13), ...reworded]))).toEqual([]);
    // Twelve different titles about a new name, in the same subreddit: a story.
    expect(run(deleted([...day(13), ...story('pumpzor', at, 12, 2 * MIN)])).map((d) => d.keyword)).toEqual(['pumpzor']);
  });

  it('needs its warm-up, ignores a step fed twice, and is deterministic', () => {
    expect(run([...background(8, T0, 4), ...story('zorvex', T0 + 2 * HOUR, 20, MIN)])).toEqual([]);
    const posts = [...day(9), ...story('zorvex', WARM + 2 * HOUR, 20, MIN)];
    expect(JSON.stringify(run(posts))).toBe(JSON.stringify(run(posts)));
    const state = createStoryState();
    run(posts, state);
    expect(observeStoryPosts(state, WARM, story('qoran', WARM, 20, 0))).toEqual([]);
  });

  it('scores with the Poisson deviance', () => {
    expect(poissonDeviance(3, 5)).toBe(0);
    expect(poissonDeviance(10, 1)).toBeCloseTo(2 * (10 * Math.log(10) - 9), 10);
    expect(() => createStoryState({ windowMs: 60_000, bucketMs: 300_000 })).toThrow(/windowMs/);
    expect(() => createStoryState({ duplicateTitleShare: 1.5 })).toThrow(/duplicateTitleShare/);
    expect(() => createStoryState({ duplicateTitleMinShared: 2.5 })).toThrow(/duplicateTitleMinShared/);
  });
});
