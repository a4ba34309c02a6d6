/**
 * How the poller spends Reddit's per-client quota, kept free of I/O: which subreddits share a
 * multireddit listing (`/r/a+b+c/new`), which are read alone, and what that costs in calls per
 * minute against the budget. Rates only make polling cheaper: a group that got more posts than one
 * page holds pages on with `after`, so a wrong estimate costs calls, never posts.
 */

/** Reddit's page size for listings and for `/by_id`. */
export const PAGE_SIZE = 100;
/** Reddit serves no listing item beyond the 1,000th: 10 pages of 100. */
export const LISTING_CAP = 1000;

export interface PlanOptions {
  pollIntervalMs: number;
  /** At most this many subreddits in one multireddit listing (the URL stays short). */
  maxBatchSubreddits: number;
  /** A group's expected posts per poll stay under this, so one page of 100 nearly always covers a poll. */
  batchPostsPerPoll: number;
  /** Reddit's queries per minute per client (100 under OAuth, 10 without). */
  quotaPerMinute: number;
  /** The share of the quota the plan aims to use. */
  budgetShare: number;
  clients: number;
  /** Posts younger than this are re-read for growth … */
  rereadMaxAgeMs: number;
  /** … once every this long. */
  rereadMinGapMs: number;
  /** Posts are kept this long … */
  retentionMs?: number;
  /** … and each is re-read at least this often, to find the ones removed on Reddit. */
  deletionCheckMs?: number;
  /** Pages a never-read subreddit's first read may take (its backfill); the pages after the first are paid from the re-read budget. */
  backfillPages?: number;
}

export interface SourceRate {
  subreddit: string;
  /** Posts per hour, measured over the stored window; null when never read. */
  postsPerHour: number | null;
}

/** One listing request per poll (more when it pages): one subreddit alone, or a group. */
export interface PollUnit {
  subreddits: string[];
  /** Posts one poll is expected to return. */
  postsPerPoll: number;
}

export interface PlanSummary {
  subreddits: number;
  /** Subreddits read alone (busy, or never read: their first read is alone, which also tells whether Reddit serves them). */
  alone: number;
  groups: number;
  /** Listing requests per minute at the poll interval, pages included. */
  listingCallsPerMinute: number;
  /** `/by_id` requests per minute to re-read every post younger than rereadMaxAgeMs once per rereadMinGapMs, and every older one kept once per deletionCheckMs. */
  rereadCallsPerMinute: number;
  callsPerMinute: number;
  /** clients × quota × share. */
  budgetPerMinute: number;
  /** Listing calls per minute per client, and the whole as a share of the quota. */
  quotaShare: number;
  /** How old a post can be when its poll reads it: the interval, stretched when the listings alone exceed the budget. */
  freshnessMs: number;
  /** What re-reads get of the budget per minute once the listings are paid (the poller's re-read rate). */
  rereadBudgetPerMinute: number;
  /** Once, not per minute: the most the never-read subreddits' backfills cost beyond their first page (a quiet one's history ends within a page). */
  backfillCalls: number;
  /** Minutes of the re-read budget those calls take at most: the backfills are spread over it, re-reads wait meanwhile. */
  backfillMinutes: number;
}

const perPoll = (postsPerHour: number, intervalMs: number) => (postsPerHour * intervalMs) / 3_600_000;

/**
 * Groups the subreddits: never-read ones alone, busy ones (more than batchPostsPerPoll a poll)
 * alone, the rest packed first-fit, busiest first, into groups under both bounds.
 */
export function planUnits(rates: readonly SourceRate[], o: Pick<PlanOptions, 'pollIntervalMs' | 'maxBatchSubreddits' | 'batchPostsPerPoll'>): PollUnit[] {
  const units: PollUnit[] = [];
  const quiet: { subreddit: string; n: number }[] = [];
  for (const r of rates) {
    if (r.postsPerHour === null) units.push({ subreddits: [r.subreddit], postsPerPoll: 0 });
    else {
      const n = perPoll(r.postsPerHour, o.pollIntervalMs);
      if (n > o.batchPostsPerPoll || o.maxBatchSubreddits <= 1) units.push({ subreddits: [r.subreddit], postsPerPoll: n });
      else quiet.push({ subreddit: r.subreddit, n });
    }
  }
  quiet.sort((a, b) => b.n - a.n || (a.subreddit < b.subreddit ? -1 : 1));
  const groups: PollUnit[] = [];
  for (const q of quiet) {
    const g = groups.find((x) => x.subreddits.length < o.maxBatchSubreddits && x.postsPerPoll + q.n <= o.batchPostsPerPoll);
    if (g) {
      g.subreddits.push(q.subreddit);
      g.postsPerPoll += q.n;
    } else groups.push({ subreddits: [q.subreddit], postsPerPoll: q.n });
  }
  return [...units, ...groups];
}

/**
 * Whether a subreddit read in multireddits should be read alone now: a multireddit silently leaves
 * out a member that turned private or was banned, so silence is the only sign. Due once the
 * subreddit has been quiet (no post, no solo read) since `quietSince` for `soloCheckMaxMs`, or, past
 * `silenceMinMs`, for long enough that its rate predicted `silencePosts` posts (Poisson: 8 expected
 * and none seen happens by chance about 3 times in 10,000).
 */
export function soloCheckDue(
  postsPerHour: number,
  quietSince: number,
  now: number,
  o: { silencePosts: number; silenceMinMs: number; soloCheckMaxMs: number },
): boolean {
  const quiet = now - quietSince;
  if (quiet >= o.soloCheckMaxMs) return true;
  return quiet >= o.silenceMinMs && (postsPerHour * quiet) / 3_600_000 >= o.silencePosts;
}

/** What polling these units costs per minute, and the freshness the budget allows. */
export function planSummary(units: readonly PollUnit[], rates: readonly SourceRate[], o: PlanOptions): PlanSummary {
  const pollsPerMinute = 60_000 / o.pollIntervalMs;
  let listing = 0;
  for (const u of units) listing += Math.max(1, Math.ceil(u.postsPerPoll / PAGE_SIZE)) * pollsPerMinute;
  const postsPerHour = rates.reduce((s, r) => s + (r.postsPerHour ?? 0), 0);
  // Posts in the re-read window, each read once per gap.
  const live = (postsPerHour * o.rereadMaxAgeMs) / 3_600_000;
  let reread = o.rereadMinGapMs > 0 ? Math.ceil(live / PAGE_SIZE) / (o.rereadMinGapMs / 60_000) : 0;
  if (o.retentionMs && o.deletionCheckMs && o.retentionMs > o.rereadMaxAgeMs) {
    const kept = (postsPerHour * (o.retentionMs - o.rereadMaxAgeMs)) / 3_600_000;
    reread += Math.ceil(kept / PAGE_SIZE) / (o.deletionCheckMs / 60_000);
  }
  const budget = o.clients * o.quotaPerMinute * o.budgetShare;
  const freshnessMs = listing <= budget ? o.pollIntervalMs : Math.ceil((o.pollIntervalMs * listing) / budget);
  const backfillCalls = rates.filter((r) => r.postsPerHour === null).length * Math.max(0, (o.backfillPages ?? 1) - 1);
  return {
    subreddits: rates.length,
    alone: units.filter((u) => u.subreddits.length === 1).length,
    groups: units.filter((u) => u.subreddits.length > 1).length,
    listingCallsPerMinute: round1(listing),
    rereadCallsPerMinute: round1(reread),
    callsPerMinute: round1(listing + reread),
    budgetPerMinute: round1(budget),
    quotaShare: Math.round(((listing + reread) / (o.clients * o.quotaPerMinute)) * 1000) / 1000,
    freshnessMs,
    rereadBudgetPerMinute: round1(rereadBudget(listing, budget)),
    backfillCalls,
    backfillMinutes: round1(backfillCalls / rereadBudget(listing, budget)),
  };
}

/** Re-reads get what the listings leave of the budget, and never less than a tenth of it (growth samples must not stop). */
export function rereadBudget(listingCallsPerMinute: number, budgetPerMinute: number): number {
  return Math.max(budgetPerMinute / 10, budgetPerMinute - listingCallsPerMinute);
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/**
 * A token bucket for `/by_id` calls: `perMinute` refill, a minute's worth of burst. The poller
 * asks before each re-read how many calls it may make now.
 */
export class CallBudget {
  private tokens: number;
  private at: number;

  constructor(
    private perMinute: number,
    now: number,
  ) {
    this.tokens = perMinute;
    this.at = now;
  }

  setRate(perMinute: number, now: number): void {
    this.refill(now);
    this.perMinute = perMinute;
    this.tokens = Math.min(this.tokens, perMinute);
  }

  /** Whole calls available now. */
  available(now: number): number {
    this.refill(now);
    return Math.floor(this.tokens);
  }

  take(calls: number, now: number): void {
    this.refill(now);
    this.tokens -= calls;
  }

  private refill(now: number): void {
    this.tokens = Math.min(Math.max(1, this.perMinute), this.tokens + ((now - this.at) * this.perMinute) / 60_000);
    this.at = now;
  }
}
