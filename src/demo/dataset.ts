/**
 * The demo's dataset: ~38 h of a small astronomy subreddit, as a poller would have seen it, with
 * one keyword spike, one fast-rising post and one surge — shaped to trigger the production default
 * detector parameters (src/trends/detectors/params.ts), never by tuning the detectors.
 *
 * Generated, not committed as a file: tsc does not copy data files into dist/, and a seeded
 * generator is smaller than the ~24,000 observations it produces. Same options → same data:
 * everything comes from one seeded PRNG and integer arithmetic on a fixed start time.
 */

import type { RedditPost } from '../posts/reddit-parse';
import { mulberry32 as prng } from '../common/prng';

/** A post as the poller reads it, plus the simulated time it was first polled. */
export type DemoPost = RedditPost & { firstSeenAtMs: number };

/** One simulated poll: the posts that appeared since the previous one plus re-reads of young posts. */
export interface DemoRound {
  atMs: number;
  posts: DemoPost[];
}

export interface DemoDataset {
  subreddit: string;
  startMs: number;
  endMs: number;
  rounds: DemoRound[];
  /** Distinct posts. */
  postCount: number;
  /** Post observations over all rounds (new posts and re-reads). */
  observationCount: number;
  /** Where the three trends are, for the demo's introduction (the detectors are not told). */
  highlights: {
    keywordSpike: { keyword: string; startMs: number; endMs: number; posts: number };
    risingPost: { id: string; title: string; createdAtMs: number };
    surge: { startMs: number; endMs: number; extraPosts: number };
  };
}

export interface DemoDatasetOptions {
  /** Default `demo`. */
  subreddit?: string;
  /** Prefix of every post id (Reddit's base-36 ids; at most 10 characters). Default `dm`. */
  idPrefix?: string;
  seed?: number;
}

const MIN = 60_000;
const HOUR = 60 * MIN;
/** A fixed Monday midnight: bucket edges (5 and 30 min) line up with round hours. */
export const DEMO_START_MS = Date.UTC(2026, 2, 2, 0, 0, 0);
export const DEMO_SEED = 20260302;
const DURATION_MS = 38 * HOUR + 30 * MIN;
/** Poll period; ≥ the rising detector's minGapMs (10 min) so every re-read yields a rate. */
const ROUND_MS = 15 * MIN;
/** Posts younger than this are re-read each round: the rising detector's norm only uses rates of posts under 3 h. */
const REREAD_MAX_AGE_MS = 3 * HOUR;
const BUCKET_MS = 5 * MIN;
/** Steady posts per 5-minute bucket (≈ 48 an hour), ±30 % over the day. */
const STEADY_RATE = 4;

const SPIKE_START = 32 * HOUR; // 08:00 on day 2, one whole 30-minute velocity bucket
const SPIKE_POSTS = 14;
const RISING_CREATED = 35 * HOUR + 3 * MIN; // 11:03 on day 2
const SURGE_START = 37 * HOUR; // 13:00 on day 2, for an hour (twelve 5-minute buckets)
const SURGE_BUCKETS = 12;
const SURGE_EXTRA_PER_BUCKET = 12;

const PLACES = ['backyard', 'balcony', 'rooftop', 'driveway', 'garden', 'campsite', 'cabin', 'porch', 'field', 'desert'];
const GEAR = ['dobsonian', 'refractor', 'reflector', 'binoculars', 'telescope', 'camera', 'eyepiece', 'mount', 'tracker', 'lens'];
const TARGETS = ['jupiter', 'saturn', 'moon', 'orion', 'andromeda', 'pleiades', 'venus', 'mars', 'nebula', 'galaxy', 'comet', 'milky'];
const ADJECTIVES = ['clear', 'hazy', 'dark', 'cold', 'windy', 'perfect', 'steady', 'humid', 'moonless', 'crisp'];
const TOPICS = ['collimation', 'stacking', 'guiding', 'focusing', 'processing', 'filters', 'polar', 'alignment', 'exposure', 'dew'];


interface PostPlan {
  post: DemoPost;
  /** Score and comments the post tends to (saturating growth, time constant tauMs). */
  finalScore: number;
  finalComments: number;
  tauMs: number;
}

export function generateDemoDataset(options: DemoDatasetOptions = {}): DemoDataset {
  const subreddit = options.subreddit ?? 'demo';
  const idPrefix = options.idPrefix ?? 'dm';
  if (!/^[a-z0-9]{1,10}$/.test(idPrefix)) throw new RangeError('idPrefix must be 1 to 10 lower-case letters or digits');
  const rand = prng(options.seed ?? DEMO_SEED);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)];
  // Zipf-ish: earlier entries are more common, as real vocabularies are.
  const zipf = <T>(list: readonly T[]): T => list[Math.floor(list.length * rand() * rand())];
  const poisson = (lambda: number): number => {
    const limit = Math.exp(-lambda);
    let k = 0;
    for (let p = rand(); p > limit; p *= rand()) k++;
    return k;
  };
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());

  const plans: PostPlan[] = [];
  let n = 0;
  const addPost = (createdAtMs: number, title: string, popularity?: { finalScore: number; finalComments: number; tauMs: number }): DemoPost => {
    const id = `${idPrefix}${(n++).toString(36).padStart(4, '0')}`;
    const slug = title.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '').slice(0, 40);
    const permalink = `/r/${subreddit}/comments/${id}/${slug}/`;
    const post: DemoPost = {
      id,
      subreddit,
      author: `stargazer${Math.floor(rand() * 400)}`,
      title,
      selftext: '',
      url: `https://www.reddit.com${permalink}`,
      permalink,
      score: 1,
      numComments: 0,
      createdAtMs: DEMO_START_MS + createdAtMs,
      firstSeenAtMs: 0,
    };
    // Ordinary posts: typically ~55 points over a few hours, at most 150 (never "rising" by the defaults).
    const finalScore = Math.min(150, Math.floor(Math.exp(4 + 0.5 * normal())));
    plans.push(popularity ? { post, ...popularity } : { post, finalScore, finalComments: Math.floor(finalScore * (0.05 + 0.25 * rand())), tauMs: 2 * HOUR });
    return post;
  };
  const steadyTitle = (): string => {
    switch (Math.floor(rand() * 5)) {
      case 0:
        return `${cap(zipf(TARGETS))} from my ${zipf(PLACES)} on a ${zipf(ADJECTIVES)} night`;
      case 1:
        return `First light with my new ${zipf(GEAR)}`;
      case 2:
        return `Beginner question about ${zipf(TOPICS)} with a ${zipf(GEAR)}`;
      case 3:
        return `${cap(zipf(TARGETS))} through the ${zipf(GEAR)}, ${zipf(ADJECTIVES)} skies`;
      default:
        return `Tips for ${zipf(TOPICS)} when imaging ${zipf(TARGETS)}?`;
    }
  };

  // The steady subreddit, with a gentle daily cycle.
  for (let b = 0; b * BUCKET_MS < DURATION_MS; b++) {
    const hourOfDay = ((b * BUCKET_MS) % (24 * HOUR)) / HOUR;
    const count = poisson(STEADY_RATE * (1 + 0.3 * Math.sin((2 * Math.PI * (hourOfDay - 9)) / 24)));
    for (let k = 0; k < count; k++) addPost(b * BUCKET_MS + Math.floor(rand() * BUCKET_MS), steadyTitle());
  }
  // A keyword spike: an eclipse everyone posts about for half an hour, on top of the usual traffic
  // (too few extra posts to be a surge). Only "eclipse" is new; the rest is the usual vocabulary.
  for (let k = 0; k < SPIKE_POSTS; k++) {
    const title = pick([
      () => `Eclipse from my ${zipf(PLACES)}`,
      () => `Eclipse through the ${zipf(GEAR)}`,
      () => `The eclipse over my ${zipf(PLACES)}, ${zipf(ADJECTIVES)} skies`,
      () => `Caught the eclipse with a ${zipf(GEAR)}`,
    ])();
    addPost(SPIKE_START + Math.floor((k + rand()) * ((30 * MIN) / SPIKE_POSTS)), title);
  }
  // One post that takes off: ~1,700 points and ~200 comments an hour over its first half-hour.
  const rising = addPost(RISING_CREATED, 'Caught the ISS crossing the face of the Sun in a single frame', {
    finalScore: 2400,
    finalComments: 300,
    tauMs: 80 * MIN,
  });
  // A surge: the subreddit gets linked from somewhere big; four times the usual traffic for an hour,
  // about the usual things (so no keyword's share moves). The surge detector reports it within its
  // first quarter-hour (its 15-minute window), before the hour is over.
  for (let b = 0; b < SURGE_BUCKETS; b++) {
    for (let k = 0; k < SURGE_EXTRA_PER_BUCKET; k++) addPost(SURGE_START + b * BUCKET_MS + Math.floor(rand() * BUCKET_MS), steadyTitle());
  }

  plans.sort((a, b) => a.post.createdAtMs - b.post.createdAtMs || (a.post.id < b.post.id ? -1 : 1));

  // Replay as polls: each round sees the posts created since the last one, and re-reads young ones.
  const rounds: DemoRound[] = [];
  let next = 0;
  let observationCount = 0;
  const young: PostPlan[] = [];
  for (let at = DEMO_START_MS + ROUND_MS; at <= DEMO_START_MS + DURATION_MS; at += ROUND_MS) {
    while (next < plans.length && plans[next].post.createdAtMs <= at) {
      plans[next].post.firstSeenAtMs = at;
      young.push(plans[next++]);
    }
    while (young.length > 0 && at - young[0].post.createdAtMs > REREAD_MAX_AGE_MS) young.shift();
    const posts = young.map((p) => {
      const grown = 1 - Math.exp(-(at - p.post.createdAtMs) / p.tauMs);
      return { ...p.post, score: 1 + Math.floor(p.finalScore * grown), numComments: Math.floor(p.finalComments * grown) };
    });
    observationCount += posts.length;
    rounds.push({ atMs: at, posts });
  }

  return {
    subreddit,
    startMs: DEMO_START_MS,
    endMs: DEMO_START_MS + DURATION_MS,
    rounds,
    postCount: plans.length,
    observationCount,
    highlights: {
      keywordSpike: { keyword: 'eclipse', startMs: DEMO_START_MS + SPIKE_START, endMs: DEMO_START_MS + SPIKE_START + 30 * MIN, posts: SPIKE_POSTS },
      risingPost: { id: rising.id, title: rising.title, createdAtMs: rising.createdAtMs },
      surge: { startMs: DEMO_START_MS + SURGE_START, endMs: DEMO_START_MS + SURGE_START + SURGE_BUCKETS * BUCKET_MS, extraPosts: SURGE_BUCKETS * SURGE_EXTRA_PER_BUCKET },
    },
  };
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
