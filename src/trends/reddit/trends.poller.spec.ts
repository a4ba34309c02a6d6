import { Logger } from '@nestjs/common';
import type { WebhookSubscriptions } from '../../delivery/subscription-source';
import type { IngestService } from '../../posts/ingest.service';
import type { PostStore } from '../../posts/post.store';
import type { RedditPost } from '../../posts/reddit-parse';
import type { TrendsPipeline } from '../trends.pipeline';
import type { CallOptions, ListingResult, RedditClient } from './reddit.client';
import { RedditRequestError } from './reddit.client';
import type { ClaimResult, PollOutcome, TrendSourceLeaseStore } from './trend-source-lease.store';
import { alignedNextPoll, failureDelay, nextClaimAttempt, TrendsPoller, unavailableDelay } from './trends.poller';

const post = (id: string): RedditPost => ({
  id,
  subreddit: 'node',
  author: 'a',
  title: 't',
  selftext: '',
  url: 'https://x',
  permalink: `/r/node/comments/${id}/`,
  score: 1,
  numComments: 0,
  createdAtMs: 0,
});

describe('poller schedule rules', () => {
  it('doubles the interval per failed poll, up to the cap', () => {
    expect([1, 2, 3, 4, 10].map((f) => failureDelay(f, 60_000, 30 * 60_000))).toEqual([60_000, 120_000, 240_000, 480_000, 1_800_000]);
  });

  it('puts the next poll on the grid of the interval, never more than one interval later', () => {
    expect(alignedNextPoll(120_000, 60_000)).toBe(180_000);
    expect(alignedNextPoll(121_000, 60_000)).toBe(180_000);
    expect(alignedNextPoll(179_999, 60_000)).toBe(180_000);
    expect(alignedNextPoll(180_000, 60_000)).toBe(240_000);
  });

  it('backs off unavailable subreddits long, doubling up to 8×', () => {
    expect([1, 2, 3, 4, 5, 9].map((f) => unavailableDelay(f, 30 * 60_000) / 60_000)).toEqual([30, 60, 120, 240, 240, 240]);
  });

  it('tries a claim again when the subreddit is due, a foreign lease ends, or a foreign last poller had its grace', () => {
    const now = 1_000_000;
    expect(nextClaimAttempt(null, 'me', now, 60_000, 100)).toBe(now + 100);
    expect(nextClaimAttempt({ leaseOwner: 'me', leaseUntil: null, nextPollAt: now + 5000 }, 'me', now, 60_000, 100)).toBe(now + 5000);
    expect(nextClaimAttempt({ leaseOwner: 'other', leaseUntil: now + 8000, nextPollAt: now - 10 }, 'me', now, 60_000, 100)).toBe(now + 8000);
    expect(nextClaimAttempt({ leaseOwner: 'other', leaseUntil: null, nextPollAt: now + 5000 }, 'me', now, 60_000, 100)).toBe(now + 65_000);
    // An expired lease of a process that died: others wait out the grace after it was due.
    expect(nextClaimAttempt({ leaseOwner: 'dead', leaseUntil: now - 1, nextPollAt: now - 70_000 }, 'me', now, 60_000, 100)).toBe(now + 100);
  });
});

/** When the poll starts; the re-read window is measured from it. */
const T0 = 10_000_000;

describe('TrendsPoller', () => {
  let t: number;
  let calls: string[];
  let outcomes: PollOutcome[];
  let claim: ClaimResult;
  let claimFor: (sub: string) => ClaimResult;
  let tracked: string[];
  let polled: Set<string>;
  let renewOk: boolean;
  let listing: ListingResult | Error;
  /** When set, the listing's pages in turn (then `listing`). */
  let pages: ListingResult[];
  let rereadIds: string[];
  let poller: TrendsPoller;
  /** How long one listing request takes on the test clock. */
  let listingMs: number;

  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    t = T0;
    calls = [];
    outcomes = [];
    claim = { claimed: true, consecutiveFailures: 0, lastError: null, lastPolledAt: null };
    claimFor = () => claim;
    tracked = ['node'];
    polled = new Set();
    renewOk = true;
    listing = { kind: 'ok', posts: [post('a1')], skipped: 0, after: 't3_a1' };
    pages = [];
    rereadIds = [];
    listingMs = 40_000;
    const repo: Partial<TrendSourceLeaseStore> = {
      claim: async (sub, owner, now, until) => (calls.push(`claim ${sub} ${until - now}`), claimFor(sub)),
      renew: async (_sub, _owner, until, now) => (calls.push(`renew ${until - now}`), renewOk),
      finish: async (_sub, _owner, o) => (outcomes.push(o), true),
      sources: async (subs) => new Map(subs.filter((s) => polled.has(s)).map((s) => [s, { lastPolledAt: T0 - 60_000, lastError: null, consecutiveFailures: 0, nextPollAt: null }])),
      releaseAll: async () => void calls.push('release'),
    };
    const client: Partial<RedditClient> = {
      oauth: false,
      fetchListing: async (subs: readonly string[], after: string | null, call?: CallOptions) => {
        await call?.beforeRequest?.();
        calls.push(`new ${subs.join('+')}${after ? ` after ${after}` : ''}`);
        t += listingMs; // by default a slow request: most of the lease is gone afterwards
        if (listing instanceof Error) throw listing;
        return pages.shift() ?? listing;
      },
      fetchByIds: async (ids: readonly string[], call?: CallOptions) => {
        await call?.beforeRequest?.();
        calls.push(`by_id ${ids.join(',')}`);
        return ids.map(post);
      },
    };
    const ingest: Partial<IngestService> = {
      upsertPosts: async (posts, opts) => (calls.push(`upsert ${posts.map((p) => p.id).join(',')}${opts?.backfill ? ' (backfill)' : ''}`), { inserted: 0, updated: 0 }),
    };
    const pipeline: Partial<TrendsPipeline> = {
      tick: async (sub) => (calls.push(`tick ${sub}`), 0),
      markGap: async (sub, fromMs, toMs) => void calls.push(`gap ${sub} ${fromMs}..${toMs}`),
    };
    const posts: Partial<PostStore> = {
      countsSince: async () => new Map(),
      rereadCandidates: async (_sub, createdFrom, seenBefore) => (calls.push(`reread ${T0 - createdFrom} ${T0 - seenBefore}`), rereadIds),
      anonymise: async (ids) => ids.length,
      purgeCreatedBefore: async () => 0,
    };
    const subscriptions: WebhookSubscriptions = { subredditsWithWebhooks: async () => tracked, hasWebhook: async (sub) => tracked.includes(sub) };
    poller = new TrendsPoller(
      client as RedditClient,
      repo as TrendSourceLeaseStore,
      ingest as IngestService,
      pipeline as TrendsPipeline,
      posts as PostStore,
      subscriptions,
      { now: () => new Date(t) },
      { poller: true, pollIntervalMs: 60_000, trackedSubreddits: [], pollerTuning: { tickMs: 3_600_000, leaseMs: 60_000 } },
    );
  });
  afterEach(async () => {
    await poller.beforeApplicationShutdown();
    jest.restoreAllMocks();
  });

  async function pollOnce() {
    poller.onApplicationBootstrap();
    await new Promise((r) => setImmediate(r));
    await poller.settled();
  }

  it('polls under a lease: new posts, re-read of recent ones, tick, then records the next poll time', async () => {
    rereadIds = ['old1', 'old2'];
    await pollOnce();
    expect(calls).toEqual([
      'claim node 60000',
      'new node',
      'upsert a1 (backfill)', // a first read: its one page is the subreddit's history
      'reread 43200000 600000', // the rising detector's defaults: 12 h of age, 10 min since the last sighting
      'reread 2592000000 144000000', // deletion checks with the budget left: kept 30 days, not seen for 40 h
      'renew 60000', // 40 s into a 60 s lease: renewed before the next request
      'by_id old1,old2',
      'upsert old1,old2',
      'tick node',
    ]);
    // The next poll on the interval's grid: 10 020 000 is the first multiple of 60 s after T0.
    expect(outcomes).toEqual([{ ok: true, listedAt: T0, nextPollAt: 10_020_000, lastError: null, consecutiveFailures: 0 }]);
  });

  it('backfills a first read: pages with after up to 1,000 posts, stored as history, paid from the re-read budget', async () => {
    listingMs = 0;
    listing = { kind: 'ok', posts: Array.from({ length: 100 }, (_, i) => post(`b${i}`)), skipped: 0, after: 't3_b99' };
    rereadIds = ['old1'];
    await pollOnce();
    expect(calls.filter((c) => c.startsWith('new '))).toEqual(['new node', ...Array(9).fill('new node after t3_b99')]);
    const upserts = calls.filter((c) => c.startsWith('upsert '));
    expect(upserts).toHaveLength(1);
    expect(upserts[0].endsWith(' (backfill)')).toBe(true);
    // Without OAuth the budget is 6 calls a minute, 5 of them for re-reads: the backfill's 9 extra pages spent them.
    expect(calls.some((c) => c.startsWith('reread') || c.startsWith('by_id'))).toBe(false);
    expect(outcomes).toMatchObject([{ ok: true }]);
  });

  it('does not backfill a subreddit polled before: it pages back to the last poll only', async () => {
    listingMs = 0;
    claim = { claimed: true, consecutiveFailures: 0, lastError: null, lastPolledAt: T0 - 60_000 };
    listing = { kind: 'ok', posts: Array.from({ length: 100 }, (_, i) => post(`b${i}`)), skipped: 0, after: 't3_b99' };
    await pollOnce();
    expect(calls.filter((c) => c.startsWith('new '))).toEqual(['new node']); // its posts are older than the last poll
    expect(calls.filter((c) => c.startsWith('upsert ')).every((c) => !c.endsWith(' (backfill)'))).toBe(true);
  });

  it("counts the posts a gap left past Reddit's 1,000-item cap, and says so", async () => {
    listingMs = 0;
    claim = { claimed: true, consecutiveFailures: 0, lastError: null, lastPolledAt: T0 - 20 * 60_000 };
    // 1,000 posts in the last 10 minutes, the last read 20 minutes ago: about 1,000 more are out of reach.
    listing = { kind: 'ok', posts: Array.from({ length: 100 }, (_, i) => ({ ...post(`c${i}`), createdAtMs: T0 - 10 * 60_000 })), skipped: 0, after: 't3_c99' };
    const warn = jest.spyOn(Logger.prototype, 'warn');
    await pollOnce();
    expect(calls.filter((c) => c.startsWith('new '))).toHaveLength(10);
    expect(warn.mock.calls.map((c) => String(c[0]))).toContainEqual(expect.stringMatching(/^r\/node: about 1000 posts between .* past Reddit's 1,000-item listing cap$/));
    expect(outcomes).toMatchObject([{ ok: true, unreachable: 1000 }]);
    // The detectors hear of the hole before the posts after it are stored.
    const gap = calls.indexOf(`gap node ${T0 - 20 * 60_000}..${T0 - 10 * 60_000}`);
    expect(gap).toBeGreaterThanOrEqual(0);
    expect(gap).toBeLessThan(calls.findIndex((c) => c.startsWith('upsert ')));
  });

  it('tells the detectors of no gap when the listing reached back to the last read', async () => {
    listingMs = 0;
    claim = { claimed: true, consecutiveFailures: 0, lastError: null, lastPolledAt: T0 - 60_000 };
    listing = { kind: 'ok', posts: Array.from({ length: 100 }, (_, i) => post(`b${i}`)), skipped: 0, after: 't3_b99' };
    await pollOnce();
    expect(calls.filter((c) => c.startsWith('gap '))).toEqual([]);
  });

  it('counts the posts past the cap when new posts push the paging off the end of the listing', async () => {
    listingMs = 0;
    claim = { claimed: true, consecutiveFailures: 0, lastError: null, lastPolledAt: T0 - 10 * 60_000 };
    // 200 posts a minute: two full pages reach 1 minute back, then Reddit's listing ends (the
    // 1,000-item window, which the posts that came meanwhile pushed the third page past).
    const full = (from: number) => Array.from({ length: 100 }, (_, i) => ({ ...post(`d${from + i}`), createdAtMs: T0 - (from + i) * 300 }));
    pages = [
      { kind: 'ok', posts: full(0), skipped: 0, after: 't3_d99' },
      { kind: 'ok', posts: full(100), skipped: 0, after: 't3_d199' },
      { kind: 'ok', posts: [], skipped: 0, after: null },
    ];
    const warn = jest.spyOn(Logger.prototype, 'warn');
    await pollOnce();
    expect(calls.filter((c) => c.startsWith('new '))).toHaveLength(3);
    expect(warn.mock.calls.map((c) => String(c[0]))).toContainEqual(expect.stringMatching(/^r\/node: about \d+ posts between .* past Reddit's 1,000-item listing cap$/));
    expect(outcomes).toMatchObject([{ ok: true, unreachable: expect.any(Number) }]);
    expect((outcomes[0] as { unreachable: number }).unreachable).toBeGreaterThan(1500);
  });

  it('abandons a poll whose lease was taken over, without recording anything', async () => {
    rereadIds = ['old1'];
    renewOk = false;
    await pollOnce();
    expect(calls).not.toContain('by_id old1');
    expect(calls).not.toContain('tick node');
    expect(outcomes).toEqual([]);
  });

  it('does nothing with a subreddit another process holds', async () => {
    claim = { claimed: false, state: { leaseOwner: 'other', leaseUntil: t + 30_000, nextPollAt: t - 1 } };
    await pollOnce();
    expect(calls).toEqual(['claim node 60000']);
    expect(outcomes).toEqual([]);
  });

  it('records a failed poll with its error class and backs the subreddit off when the error is its own', async () => {
    claim = { claimed: true, consecutiveFailures: 2, lastError: 'http_400', lastPolledAt: null };
    listing = new RedditRequestError('http_400', 'answered 400');
    await pollOnce();
    expect(calls).not.toContain('tick node');
    expect(outcomes).toEqual([{ ok: false, nextPollAt: t + 240_000, lastError: 'http_400', consecutiveFailures: 3 }]);
  });

  it('keeps a subreddit due after an outage error: the client backs off for all, and the subreddit is read once Reddit answers', async () => {
    claim = { claimed: true, consecutiveFailures: 2, lastError: 'http_503', lastPolledAt: T0 - 60_000 };
    listing = new RedditRequestError('http_503', 'answered 503');
    await pollOnce();
    expect(outcomes).toEqual([{ ok: false, nextPollAt: t, lastError: 'http_503', consecutiveFailures: 3 }]);
  });

  it('warns about an unavailable subreddit once per episode', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    listing = { kind: 'unavailable', status: 404, detail: 'HTTP 404 (banned)', reason: 'banned' };
    claim = { claimed: true, consecutiveFailures: 1, lastError: 'unavailable_404_banned', lastPolledAt: null };
    await pollOnce();
    expect(warn).not.toHaveBeenCalled();
    expect(outcomes).toEqual([{ ok: false, nextPollAt: t + 60 * 60_000, lastError: 'unavailable_404_banned', consecutiveFailures: 2 }]);
  });

  it('never reads a subreddit Reddit refuses in a multireddit, which would leave it out silently: it is released to be read alone', async () => {
    tracked = ['deno', 'node'];
    polled = new Set(tracked); // both read before, both quiet: one group
    claimFor = (sub) => (sub === 'deno' ? { claimed: true, consecutiveFailures: 1, lastError: 'unavailable_403_private', lastPolledAt: T0 - 3600_000 } : claim);
    await pollOnce();
    expect(calls.filter((c) => c.startsWith('new '))).toEqual(['new node']);
    expect(outcomes[0]).toEqual({ ok: false, nextPollAt: T0, lastError: 'unavailable_403_private', consecutiveFailures: 1 });
    expect(outcomes[1]).toMatchObject({ ok: true, lastError: null });
  });

  it('says it polls only once there is something to poll, and sends nothing before', async () => {
    const log = jest.spyOn(Logger.prototype, 'log');
    tracked = [];
    await pollOnce();
    expect(calls).toEqual([]);
    expect(log.mock.calls.map(([m]) => String(m))).toEqual([
      'nothing to poll on Reddit yet (no webhook and no TRACKED_SUBREDDITS): no request is sent; looking for a subreddit every 10 s',
    ]);
    tracked = ['node'];
    t += 10_000;
    await poller.tick();
    await poller.settled();
    expect(calls[0]).toBe('claim node 60000');
    const polling = log.mock.calls.map(([m]) => String(m)).filter((m) => m.startsWith('polling Reddit'));
    expect(polling).toHaveLength(1);
    expect(polling[0]).toMatch(/^polling Reddit \(.*, public endpoints\) every 60000 ms for 1 subreddit\(s\)/);
  });

  it('releases its leases when the application stops', async () => {
    await pollOnce();
    await poller.beforeApplicationShutdown();
    expect(calls.at(-1)).toBe('release');
  });
});
