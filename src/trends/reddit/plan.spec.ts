import { CallBudget, planSummary, planUnits, rereadBudget, soloCheckDue, SourceRate } from './plan';
import { postRate } from './trends.poller';

const OPTS = {
  pollIntervalMs: 60_000,
  maxBatchSubreddits: 100,
  batchPostsPerPoll: 50,
  quotaPerMinute: 100,
  budgetShare: 0.6,
  clients: 1,
  rereadMaxAgeMs: 12 * 3600_000,
  rereadMinGapMs: 10 * 60_000,
};

describe('poll plan', () => {
  it('reads never-read and busy subreddits alone and packs quiet ones into groups under both bounds', () => {
    const rates: SourceRate[] = [
      { subreddit: 'new', postsPerHour: null },
      { subreddit: 'busy', postsPerHour: 6000 }, // 100 a minute
      ...Array.from({ length: 250 }, (_, i) => ({ subreddit: `q${i}`, postsPerHour: 0.2 })),
    ];
    const units = planUnits(rates, OPTS);
    expect(units.filter((u) => u.subreddits.length === 1).map((u) => u.subreddits[0])).toEqual(['new', 'busy']);
    const groups = units.filter((u) => u.subreddits.length > 1);
    expect(groups.map((g) => g.subreddits.length)).toEqual([100, 100, 50]);
    expect(new Set(units.flatMap((u) => u.subreddits)).size).toBe(252);

    // Posts per poll bound the group too: 40 subreddits of 60 an hour (1 a minute) make groups of 50 posts.
    const mid = planUnits(Array.from({ length: 120 }, (_, i) => ({ subreddit: `m${i}`, postsPerHour: 60 })), OPTS);
    expect(mid.map((u) => u.subreddits.length)).toEqual([50, 50, 20]);
  });

  it('costs 1,000 quiet subreddits and a few busy ones within 60 % of one client at 60 s freshness', () => {
    const rates: SourceRate[] = [
      ...Array.from({ length: 990 }, (_, i) => ({ subreddit: `q${i}`, postsPerHour: 0.25 })),
      ...Array.from({ length: 10 }, (_, i) => ({ subreddit: `b${i}`, postsPerHour: 60 })),
    ];
    const s = planSummary(planUnits(rates, OPTS), rates, OPTS);
    expect(s.subreddits).toBe(1000);
    expect(s.listingCallsPerMinute).toBeLessThan(20);
    expect(s.callsPerMinute).toBeLessThanOrEqual(60);
    expect(s.freshnessMs).toBe(60_000);
    expect(s.budgetPerMinute).toBe(60);
  });

  it('counts the deletion checks of every kept post among the re-reads', () => {
    const rates = [{ subreddit: 'a', postsPerHour: 100 }];
    const base = planSummary(planUnits(rates, OPTS), rates, OPTS);
    // 100 an hour for 30 days, less the 12 h of growth re-reads: 70,800 posts, 708 calls every 40 h.
    const withChecks = planSummary(planUnits(rates, OPTS), rates, { ...OPTS, retentionMs: 30 * 86_400_000, deletionCheckMs: 40 * 3600_000 });
    expect(withChecks.rereadCallsPerMinute).toBeCloseTo(base.rereadCallsPerMinute + 708 / 2400, 1);
  });

  it('stretches the freshness when the listings alone exceed the budget', () => {
    const rates = Array.from({ length: 200 }, (_, i) => ({ subreddit: `b${i}`, postsPerHour: 6000 }));
    const s = planSummary(planUnits(rates, OPTS), rates, OPTS);
    expect(s.listingCallsPerMinute).toBe(200);
    expect(s.freshnessMs).toBe(Math.ceil((60_000 * 200) / 60));
    expect(planSummary(planUnits(rates, OPTS), rates, { ...OPTS, clients: 4 }).freshnessMs).toBe(60_000);
  });

  it('counts the first reads\' backfill pages once, against the re-read budget', () => {
    const rates: SourceRate[] = [{ subreddit: 'known', postsPerHour: 10 }, ...Array.from({ length: 20 }, (_, i) => ({ subreddit: `new${i}`, postsPerHour: null }))];
    const s = planSummary(planUnits(rates, OPTS), rates, { ...OPTS, backfillPages: 10 });
    // Twenty never-read subreddits, nine pages each beyond the first; 21 listings a minute leave 39 for re-reads.
    expect(s.backfillCalls).toBe(180);
    expect(s.backfillMinutes).toBeCloseTo(180 / 39, 1);
    expect(planSummary(planUnits(rates, OPTS), rates, OPTS).backfillCalls).toBe(0);
  });

  it('leaves re-reads what the listings do not use, and never less than a tenth', () => {
    expect(rereadBudget(20, 60)).toBe(40);
    expect(rereadBudget(80, 60)).toBe(6);
  });

  it('refills the re-read budget continuously, up to a minute of it', () => {
    const b = new CallBudget(30, 0);
    expect(b.available(0)).toBe(30);
    b.take(30, 0);
    expect(b.available(0)).toBe(0);
    expect(b.available(10_000)).toBe(5);
    expect(b.available(10 * 60_000)).toBe(30);
    b.setRate(6, 10 * 60_000);
    expect(b.available(10 * 60_000)).toBe(6);
  });

  it('measures a rate over the window, or over the span of a first full page', () => {
    const h = 3600_000;
    expect(postRate(12, 0, 24 * h, 24 * h)).toBe(0.5);
    // 100 posts in the last half hour: 200 an hour, not 100 / 24.
    expect(postRate(100, 23.5 * h, 24 * h, 24 * h)).toBe(200);
  });

  it('reads a grouped subreddit alone once its silence is far longer than its rate predicts, or after the longest gap allowed', () => {
    const o = { silencePosts: 8, silenceMinMs: 5 * 60_000, soloCheckMaxMs: 24 * 3600_000 };
    const now = 100 * 3600_000;
    // 60 posts an hour: 8 expected in 8 min.
    expect(soloCheckDue(60, now - 7 * 60_000, now, o)).toBe(false);
    expect(soloCheckDue(60, now - 8 * 60_000, now, o)).toBe(true);
    // 600 an hour would predict 8 within 48 s, but silence shorter than silenceMinMs proves nothing.
    expect(soloCheckDue(600, now - 4 * 60_000, now, o)).toBe(false);
    expect(soloCheckDue(600, now - 5 * 60_000, now, o)).toBe(true);
    // 2 a day: 8 expected in 4 days, but never longer than a day without a solo read.
    expect(soloCheckDue(2 / 24, now - 23 * 3600_000, now, o)).toBe(false);
    expect(soloCheckDue(2 / 24, now - 24 * 3600_000, now, o)).toBe(true);
    expect(soloCheckDue(0, now - 24 * 3600_000, now, o)).toBe(true);
  });
});
