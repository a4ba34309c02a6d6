/**
 * `trends.velocity` on posts: a new subject that several distinct authors post about within the
 * hour, reported as soon as the evidence is there.
 *
 * A sliding window (params.windowMs) holds the recent posts; each keyword knows which sources
 * (sources.ts: a known author, or for unknown authors a title) carried it in the window. Whenever
 * a batch of posts is fed (every evaluation step, params.bucketMs), the keywords those posts touched
 * are judged on the window as it stands: enough distinct authors, far more than the keyword's own
 * history lets expect. Nothing waits for a half-hour bucket, and nothing is shared between
 * keywords (no learnt dispersion, no grouping over hours), so concurrent stories fire apart.
 *
 * History is each keyword's share of sources, exponentially decayed (half-life
 * params.historyHalfLifeMs) and fed only with what has left the window: a story never raises the
 * bar it is judged against while it builds. An everyday word (`monday`, `dip`) has a share of its
 * own and an overdispersed count, so it needs many times more authors than a new name or ticker,
 * which is judged against the small prior share.
 */
import type { VelocityDetection } from '../../events/kinds/velocity';
import { resolveStoryParams, StoryParams } from './params';
import { postSource } from './sources';
import { postKeywords } from './tokenizer';
import type { VelocityPost } from './velocity';

/** A post as the window holds it. */
interface WindowPost {
  readonly id: string;
  readonly t: number;
  readonly source: string;
  readonly permalink?: string;
  readonly keywords: readonly string[];
}

/** One keyword's posts in the window and the sources behind them (source → posts). */
interface KeywordWindow {
  readonly posts: WindowPost[];
  readonly sources: Map<string, number>;
  known: number;
  unknown: number;
}

/** An exponentially decayed sum: `sum` as of time `at`. */
interface Decayed {
  sum: number;
  at: number;
}

/** A story that fired: later keywords of the same posts join it instead of firing. */
interface Story {
  readonly at: number;
  readonly keywords: Set<string>;
  readonly sources: Set<string>;
}

export interface StoryState {
  readonly params: Readonly<StoryParams>;
  readonly posts: WindowPost[];
  /** Index of the oldest post still in the window (posts before it are spent; compacted now and then). */
  head: number;
  readonly seenIds: Set<string>;
  /** Source → posts in the window: the subreddit's independent volume. */
  readonly windowSources: Map<string, number>;
  /** How many of windowSources are known authors. */
  windowKnown: number;
  readonly keywords: Map<string, KeywordWindow>;
  /**
   * Keywords with at least params.minAuthors sources in the window: judged at every step, not only
   * when a post carries them, since their score also rises as the window's other posts leave it.
   */
  readonly ripe: Set<string>;
  /** Keyword → decayed count of (keyword, source) presences that left the window. */
  readonly history: Map<string, Decayed>;
  /** Decayed count of sources that left the window (the denominator of every history share). */
  readonly total: Decayed;
  /** Keyword → time before which it cannot start a story again. */
  readonly cooldowns: Map<string, number>;
  readonly stories: Story[];
  firstPostAt: number | null;
  lastBucketStart: number | null;
}

export function createStoryState(params: Partial<StoryParams> = {}): StoryState {
  return {
    params: resolveStoryParams(params),
    posts: [],
    head: 0,
    seenIds: new Set(),
    windowSources: new Map(),
    windowKnown: 0,
    keywords: new Map(),
    ripe: new Set(),
    history: new Map(),
    total: { sum: 0, at: 0 },
    cooldowns: new Map(),
    stories: [],
    firstPostAt: null,
    lastBucketStart: null,
  };
}

/** Placeholders Reddit leaves where a text was deleted or removed: they say nothing about the subject. */
const PLACEHOLDER = /^\s*\[\s*(deleted|removed)( by (user|moderator|reddit))?\s*\]\s*$/i;

/** The text as evidence: '' for a deleted or removed placeholder. */
export function storyText(text: string | undefined): string {
  return text === undefined || PLACEHOLDER.test(text) ? '' : text;
}

/**
 * Feeds the posts created in [bucketStartMs, bucketStartMs + bucketMs) and judges the keywords
 * they carry, and those with enough authors in the window, at the step's end; returns one detection per new story, highest score first. A step
 * at or before the last one fed is ignored (replays are harmless); a repeated post id counts once.
 * Posts should be in creation order within the step (they are sorted here).
 */
export function observeStoryPosts(state: StoryState, bucketStartMs: number, posts: readonly VelocityPost[]): VelocityDetection[] {
  const p = state.params;
  if (!Number.isFinite(bucketStartMs)) throw new RangeError('bucketStartMs must be a finite number');
  const start = Math.floor(bucketStartMs / p.bucketMs) * p.bucketMs;
  if (state.lastBucketStart !== null && start <= state.lastBucketStart) return [];
  state.lastBucketStart = start;
  const end = start + p.bucketMs;
  const touched = new Set<string>();
  // A post without its creation time counts from the step's start.
  const at = (post: VelocityPost) => Math.min(Math.max(post.createdAtMs ?? start, start), end - 1);
  const order = posts.map((_, i) => i).sort((a, b) => at(posts[a]) - at(posts[b]) || a - b);
  for (const i of order) {
    const post = posts[i];
    if (state.seenIds.has(post.id)) continue;
    const t = at(post);
    evict(state, t - p.windowMs);
    addPost(state, post, t, touched);
  }
  evict(state, end - p.windowMs);
  if (state.firstPostAt === null) return [];
  for (const k of state.ripe) touched.add(k);
  if (touched.size === 0) return [];
  return judge(state, end, touched);
}

function addPost(state: StoryState, post: VelocityPost, t: number, touched: Set<string>): void {
  state.seenIds.add(post.id);
  if (state.firstPostAt === null) state.firstPostAt = t;
  const body = state.params.bodyChars > 0 ? storyText(post.selftext).slice(0, state.params.bodyChars) : '';
  const keywords = postKeywords(storyText(post.title), body);
  const given = post.source ?? postSource(post);
  const source = isKnown(given) ? given : (rewordedSource(state, keywords) ?? given);
  const wp: WindowPost = { id: post.id, t, source, permalink: post.permalink, keywords };
  state.posts.push(wp);
  const had = state.windowSources.get(source) ?? 0;
  state.windowSources.set(source, had + 1);
  if (had === 0 && isKnown(source)) state.windowKnown++;
  for (const k of keywords) {
    let w = state.keywords.get(k);
    if (!w) state.keywords.set(k, (w = { posts: [], sources: new Map(), known: 0, unknown: 0 }));
    w.posts.push(wp);
    const n = w.sources.get(source) ?? 0;
    w.sources.set(source, n + 1);
    if (n === 0) {
      if (isKnown(source)) w.known++;
      else w.unknown++;
      if (w.sources.size >= state.params.minAuthors) state.ripe.add(k);
    }
    touched.add(k);
  }
}

const isKnown = (source: string) => source.startsWith('u/');

/**
 * The source of a window post of an unknown author whose keywords are nearly this post's
 * (params.duplicateTitleShare, at least params.duplicateTitleMinShared shared), or null: without a
 * name, a reworded repost is told from another person only by how much of the wording it keeps.
 */
function rewordedSource(state: StoryState, keywords: readonly string[]): string | null {
  const p = state.params;
  if (p.duplicateTitleShare <= 0 || keywords.length < p.duplicateTitleMinShared) return null;
  const shared = new Map<WindowPost, number>();
  for (const k of keywords) {
    const w = state.keywords.get(k);
    if (w) for (const wp of w.posts) if (!isKnown(wp.source)) shared.set(wp, (shared.get(wp) ?? 0) + 1);
  }
  let best: WindowPost | null = null;
  let bestShare = 0;
  for (const [wp, n] of shared) {
    if (n < p.duplicateTitleMinShared) continue;
    const share = n / (keywords.length + wp.keywords.length - n);
    if (share >= p.duplicateTitleShare && share > bestShare) {
      best = wp;
      bestShare = share;
    }
  }
  return best?.source ?? null;
}

/** Posts created before `cutoff` leave the window; what leaves becomes history. */
function evict(state: StoryState, cutoff: number): void {
  const posts = state.posts;
  const half = state.params.historyHalfLifeMs;
  while (state.head < posts.length && posts[state.head].t < cutoff) {
    const wp = posts[state.head++];
    state.seenIds.delete(wp.id);
    for (const k of wp.keywords) {
      const w = state.keywords.get(k)!;
      w.posts.shift();
      const n = w.sources.get(wp.source)! - 1;
      if (n > 0) w.sources.set(wp.source, n);
      else {
        w.sources.delete(wp.source);
        if (isKnown(wp.source)) w.known--;
        else w.unknown--;
        if (w.sources.size < state.params.minAuthors) state.ripe.delete(k);
        let h = state.history.get(k);
        if (!h) state.history.set(k, (h = { sum: 0, at: wp.t }));
        addDecayed(h, wp.t, half);
      }
      if (w.posts.length === 0) state.keywords.delete(k);
    }
    const left = state.windowSources.get(wp.source)! - 1;
    if (left > 0) state.windowSources.set(wp.source, left);
    else {
      state.windowSources.delete(wp.source);
      if (isKnown(wp.source)) state.windowKnown--;
      addDecayed(state.total, wp.t, half);
    }
  }
  if (state.head > 4096 && state.head * 2 > posts.length) {
    posts.splice(0, state.head);
    state.head = 0;
  }
  if (state.history.size > state.params.maxKeywords) pruneHistory(state, cutoff);
}

function addDecayed(d: Decayed, t: number, halfLifeMs: number): void {
  d.sum = d.sum * Math.pow(2, -(t - d.at) / halfLifeMs) + 1;
  d.at = t;
}

function decayedAt(d: Decayed | undefined, t: number, halfLifeMs: number): number {
  return d === undefined ? 0 : d.sum * Math.pow(2, -(t - d.at) / halfLifeMs);
}

/** Forgets the least-used histories beyond maxKeywords (keywords still in the window are kept). */
function pruneHistory(state: StoryState, now: number): void {
  const half = state.params.historyHalfLifeMs;
  const ranked = [...state.history].map(([k, h]) => [k, decayedAt(h, now, half)] as const).sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
  const drop = state.history.size - Math.floor(state.params.maxKeywords * 0.8);
  for (let i = 0; i < drop; i++) if (!state.keywords.has(ranked[i][0])) state.history.delete(ranked[i][0]);
}

/**
 * What a distinct title of an unknown author counts for: params.unknownAuthorWeight where most of
 * the window's posts have known authors (there a deleted account is likely spam or removed, and
 * must not pass for several people), a whole author where few do (a subreddit seen only through
 * deleted accounts, or a dump without names: titles are all there is).
 */
function unknownWeight(state: StoryState): number {
  return state.windowKnown * 2 >= state.windowSources.size ? state.params.unknownAuthorWeight : 1;
}

interface Candidate {
  keyword: string;
  window: KeywordWindow;
  evidence: number;
  base: number;
  expected: number;
  score: number;
}

/** Score of `keyword` now, or null when it lacks the authors or the history to judge it. */
function candidate(state: StoryState, now: number, keyword: string, minEvidence: number): Candidate | null {
  const p = state.params;
  const w = state.keywords.get(keyword);
  if (!w) return null;
  const evidence = w.known + unknownWeight(state) * w.unknown;
  if (evidence < minEvidence) return null;
  const total = decayedAt(state.total, now, p.historyHalfLifeMs);
  const base = Math.max(total > 0 ? decayedAt(state.history.get(keyword), now, p.historyHalfLifeMs) / total : 0, p.priorShare);
  const expected = base * Math.max(state.windowSources.size, 1);
  if (evidence < p.minRatio * expected) return null;
  const score = Math.sqrt(poissonDeviance(evidence, expected) / (1 + p.excessDispersion * expected));
  return { keyword, window: w, evidence, base, expected, score };
}

function judge(state: StoryState, now: number, touched: Set<string>): VelocityDetection[] {
  const p = state.params;
  const warm = now - state.firstPostAt! >= p.warmupMs && decayedAt(state.total, now, p.historyHalfLifeMs) >= p.warmupSources;
  if (!warm) return [];
  while (state.stories.length > 0 && state.stories[0].at < now - p.storyMs) state.stories.shift();
  for (const [k, until] of state.cooldowns) if (until <= now) state.cooldowns.delete(k);
  const hot: Candidate[] = [];
  for (const k of touched) {
    if (state.cooldowns.has(k)) continue;
    const c = candidate(state, now, k, p.minAuthors);
    if (c && c.score >= p.threshold) hot.push(c);
  }
  if (hot.length === 0) return [];
  hot.sort(byScore);
  const fresh: { lead: Candidate; keywords: string[]; sources: Set<string> }[] = [];
  for (const c of hot) {
    // Most of its sources are in a story told in the last hours (a later facet of it), or most of
    // that story is in its posts (`gme` rising with the news about GameStop): no new story. A told
    // story's sources are a new subject's posts, not a big everyday subject's, so it swallows no
    // unrelated news.
    // Within its first half hour a story also takes a keyword that shares a few posts with it
    // (`josh` + `brown` after `cnbc` + `shout`: headlines of one moment seldom repeat each other's words).
    const told = state.stories.find((s) => {
      const story = currentSources(state, s);
      const both = overlap(c.window.sources, story);
      const small = Math.min(c.window.sources.size, story.size);
      return both >= TOLD_SHARE * small || (now - s.at <= RECENT_MS && both >= Math.max(2, RECENT_SHARE * small));
    });
    if (told) {
      told.keywords.add(c.keyword);
      for (const src of c.window.sources.keys()) told.sources.add(src);
      state.cooldowns.set(c.keyword, now + p.cooldownMs);
      continue;
    }
    const same = fresh.find((s) => sameStory(c.window.sources, s.sources, p.storyOverlap));
    if (same) {
      same.keywords.push(c.keyword);
      for (const src of c.window.sources.keys()) same.sources.add(src);
    } else fresh.push({ lead: c, keywords: [c.keyword], sources: new Set(c.window.sources.keys()) });
  }
  if (fresh.length === 0) return [];
  // Keywords rising in most of a story's posts without firing on their own are part of it.
  const inFresh = new Set(fresh.flatMap((s) => s.keywords));
  const near = new Set<string>();
  for (const s of fresh) for (const wp of s.lead.window.posts) for (const k of wp.keywords) if (!inFresh.has(k) && !state.cooldowns.has(k)) near.add(k);
  const rising: Candidate[] = [];
  for (const k of near) {
    const c = candidate(state, now, k, p.companionMinAuthors);
    if (c && c.score >= p.companionScore) rising.push(c);
  }
  rising.sort(byScore);
  // Strongest first, each widening its story's sources for the next (`shout`, then `josh`).
  for (const c of rising) {
    const i = fresh.findIndex((s) => {
      const both = overlap(c.window.sources, s.sources);
      return both >= p.storyOverlap * c.window.sources.size && both >= p.companionShare * s.sources.size;
    });
    if (i < 0) continue;
    fresh[i].keywords.push(c.keyword);
    for (const src of c.window.sources.keys()) fresh[i].sources.add(src);
  }
  // Two stories of this step that now, with their companions, share most of their sources are one
  // (`cohen` + `director` and `board` + `gamestop`, from different headlines of one announcement).
  for (let j = fresh.length - 1; j > 0; j--) {
    const into = fresh.slice(0, j).find((s) => sameStory(mapOf(fresh[j].sources), s.sources, p.storyOverlap));
    if (!into) continue;
    into.keywords.push(...fresh[j].keywords.filter((k) => !into.keywords.includes(k)));
    for (const src of fresh[j].sources) into.sources.add(src);
    fresh.splice(j, 1);
  }
  return fresh.map((s) => {
    state.stories.push({ at: now, keywords: new Set(s.keywords), sources: s.sources });
    for (const k of s.keywords) state.cooldowns.set(k, now + p.cooldownMs);
    return detection(state, now, s.lead, s.keywords);
  });
}

function detection(state: StoryState, now: number, c: Candidate, keywords: string[]): VelocityDetection {
  const p = state.params;
  const sample = c.window.posts.slice(0, p.maxEvidence);
  return {
    kind: 'trends.velocity',
    keyword: c.keyword,
    keywords,
    bucketStart: now - p.windowMs,
    bucketEnd: now,
    firstPostAt: c.window.posts[0].t,
    count: c.window.sources.size,
    posts: state.windowSources.size,
    distinctAuthors: c.window.known,
    share: round6(c.window.sources.size / Math.max(state.windowSources.size, 1)),
    baselineShare: round6(c.base),
    score: round4(c.score),
    threshold: p.threshold,
    minCount: p.minAuthors,
    postIds: sample.map((wp) => wp.id),
    permalinks: sample.filter((wp) => wp.permalink).map((wp) => wp.permalink!),
  };
}

/**
 * One story: the two share most of their sources, both ways, or most of the smaller one's when the
 * two are of a size (`josh` and `brown`). A new name that rides in a small part of a big subject's
 * posts (`cohen` in `gme`'s) is a story of its own.
 */
function sameStory(a: ReadonlyMap<string, number>, b: ReadonlySet<string>, share: number): boolean {
  const both = overlap(a, b);
  const small = Math.min(a.size, b.size);
  const large = Math.max(a.size, b.size);
  return both > 0 && (both >= share * large || (both >= share * small && large <= SAME_SIZE * small));
}

/** A keyword that shares at least this share of its sources, or of a told story's, with that story is part of it. */
const TOLD_SHARE = 0.5;

/** A story this young takes a keyword sharing this share of sources with it (at least two). */
const RECENT_MS = 30 * 60_000;
const RECENT_SHARE = 0.2;

/** Two keywords' source counts within this factor are "of a size". */
const SAME_SIZE = 3;

/** A told story's sources: those it fired with and joined, and those its keywords have in the window now. */
function currentSources(state: StoryState, story: Story): Set<string> {
  for (const k of story.keywords) {
    const w = state.keywords.get(k);
    if (w) for (const src of w.sources.keys()) story.sources.add(src);
  }
  return story.sources;
}

const byScore = (a: Candidate, b: Candidate) => b.score - a.score || (a.keyword < b.keyword ? -1 : a.keyword > b.keyword ? 1 : 0);

function mapOf(set: ReadonlySet<string>): Map<string, number> {
  return new Map([...set].map((k) => [k, 1]));
}

function overlap(a: ReadonlyMap<string, number>, b: ReadonlySet<string>): number {
  let n = 0;
  for (const k of a.keys()) if (b.has(k)) n++;
  return n;
}

/** 2·[x·ln(x/λ) − (x − λ)]: the Poisson log-likelihood ratio of x against λ (x above λ). */
export function poissonDeviance(x: number, lambda: number): number {
  if (x <= lambda) return 0;
  return 2 * (x * Math.log(x / lambda) - (x - lambda));
}

function round4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
