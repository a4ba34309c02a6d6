import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CLOCK, Clock } from '../../common/clock';
import { Metrics } from '../../metrics/metrics.service';
import { IngestService } from '../../posts/ingest.service';
import { TrendsPipeline } from '../trends.pipeline';
import { TRENDS_OPTIONS, TrendsModuleOptions } from '../trends.options';
import { PostStore } from '../../posts/post.store';
import { WebhookSubscriptions } from '../../delivery/subscription-source';
import { RedditPost } from '../../posts/reddit-parse';
import { isUnavailable, unavailableErrorClass, sourceStatusOf } from '../coverage';
import { CallBudget, LISTING_CAP, PAGE_SIZE, planSummary, PlanSummary, planUnits, PollUnit, rereadBudget, soloCheckDue, SourceRate } from './plan';
import { CallOptions, ListingResult, RedditClient, RedditRequestError, TRANSIENT_CLASS } from './reddit.client';
import { ClaimResult, PollOutcome, SourceState, TrendSourceLeaseStore } from './trend-source-lease.store';
import { resolvePollerOptions, ResolvedPollerOptions } from './tuning';

const TICK_INTERVAL_NAME = 'trendhooks-reddit-poll';
/** The tracked set is re-read at least this often (and at least once per poll interval). */
const TRACKED_REFRESH_MS = 10_000;

/** Posts deleted per statement of the retention sweep. */
const RETENTION_BATCH = 5000;

/** Thrown from the pre-request hook when another process took the subreddit over. */
class LeaseLostError extends Error {
  constructor(subreddit: string) {
    super(`lease on r/${subreddit} lost`);
    this.name = 'LeaseLostError';
  }
}

/** Delay after `failures` failed polls in a row: the interval doubled per failure, capped. */
export function failureDelay(failures: number, intervalMs: number, maxMs: number): number {
  return Math.min(maxMs, intervalMs * 2 ** Math.max(0, failures - 1));
}

/** A subreddit Reddit refuses is tried again after `baseMs`, doubling up to 8×. */
export function unavailableDelay(failures: number, baseMs: number): number {
  return baseMs * 2 ** Math.min(3, Math.max(0, failures - 1));
}

/**
 * When to try claiming again after a failed claim: when it is due, when another process's lease
 * runs out, or — while another process is its last poller — a grace after it is due.
 */
export function nextClaimAttempt(state: SourceState | null, owner: string, now: number, graceMs: number, minWaitMs: number): number {
  if (!state) return now + minWaitMs;
  let at = state.nextPollAt ?? now;
  if (state.leaseUntil !== null && state.leaseUntil >= now) at = Math.max(at, Math.min(state.leaseUntil, now + graceMs));
  else if (state.leaseOwner !== null && state.leaseOwner !== owner) at = Math.max(at, (state.nextPollAt ?? now) + graceMs);
  return Math.max(at, now + minWaitMs);
}

/** A subreddit this process claimed for one poll. */
interface Claimed {
  sub: string;
  claim: Extract<ClaimResult, { claimed: true }>;
}

/**
 * What a listing capped by Reddit left out: for each held subreddit read before, from its last
 * read's start to the listing's oldest post (that read and this one overlap no further back).
 */
export function listingGaps(held: readonly Claimed[], posts: readonly RedditPost[]): { sub: string; fromMs: number; toMs: number }[] {
  if (posts.length === 0) return [];
  const oldest = Math.min(...posts.map((p) => p.createdAtMs));
  return held.flatMap(({ sub, claim }) => (claim.lastPolledAt === null || claim.lastPolledAt >= oldest ? [] : [{ sub, fromMs: claim.lastPolledAt, toMs: oldest }]));
}

/** The plan for the tracked set as it stands: the groups, and what they cost. */
export interface SourcesPlan {
  units: PollUnit[];
  summary: PlanSummary;
  rates: SourceRate[];
}

/**
 * Polls Reddit for every tracked subreddit (webhook subscriptions ∪ TRACKED_SUBREDDITS) every
 * pollIntervalMs. Quiet subreddits share multireddit listings (`/r/a+b+c/new`), busy ones and
 * never-read ones are read alone (plan.ts); a listing pages with `after` back to the previous
 * poll's start (up to Reddit's 1,000 items), so nothing posted between two polls is lost, an
 * outage included. Then: posts store (the pipeline listens) → re-read of recent posts for growth,
 * 100 ids a call, within what the listings leave of the budget → store again → pipeline tick per
 * subreddit. Polls spread over the configured OAuth clients, each with its own rate-limit budget.
 * Each subreddit is polled under its lease in `trend_sources`, so across processes on one
 * database a subreddit is never polled twice at once; failures and unavailable subreddits back off
 * through the same row.
 */
@Injectable()
export class TrendsPoller implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('TrendsPoller');
  /** What the last start-up line said: undefined before the first look at the subreddits. */
  private announcedIdle: boolean | undefined;
  /** Lease owner: unique per process start. */
  readonly owner = `${hostname().slice(0, 40)}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly opts: ResolvedPollerOptions;
  /** Per subreddit, the poll it is part of. */
  private readonly inflight = new Map<string, Promise<void>>();
  private readonly jobs = new Set<Promise<void>>();
  /** Per subreddit, no claim is tried before this (learnt from its row); absent = now. */
  private readonly notBefore = new Map<string, number>();
  /** Measured posts per hour; null: never read (its first read is alone). */
  private readonly rates = new Map<string, number | null>();
  private ratesAt = -Infinity;
  /**
   * Read alone next time: a multireddit with them in it was refused, or Reddit refuses them (a
   * multireddit would silently leave them out, and their silence would look like quiet).
   */
  private readonly alone = new Set<string>();
  /** Per subreddit, the newest sign it is readable: its newest post seen, or its last solo read (or when first seen). */
  private readonly quietSince = new Map<string, number>();
  private readonly clients: RedditClient[];
  private readonly active: number[];
  /** Polls started per client: among clients with as few polls in flight, the one that started fewest gets the next. */
  private readonly started: number[];
  private readonly rereads: CallBudget;
  /** First reads of never-read subreddits: their own share of the quota (they may also use what re-reads leave). */
  private readonly firstReads: CallBudget;
  /** First reads in flight: they never hold every slot, so live polls always find one. */
  private firstReadsInFlight = 0;
  private tracked: string[] = [];
  private trackedAt = -Infinity;
  private sweptAt = -Infinity;
  private running = false;
  private ticking = false;
  private readonly abort = new AbortController();
  private timer?: NodeJS.Timeout;
  /** Polls completed (successful or not; a group's poll counts once), for tests and metrics. */
  polls = 0;

  constructor(
    private readonly client: RedditClient,
    private readonly repo: TrendSourceLeaseStore,
    private readonly ingest: IngestService,
    private readonly pipeline: TrendsPipeline,
    // Stored posts (rates, re-reads, retention) and the subreddits webhooks follow: asked of their owners.
    private readonly posts: PostStore,
    private readonly subscriptions: WebhookSubscriptions,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(TRENDS_OPTIONS) options: TrendsModuleOptions,
    @Optional() private readonly scheduler?: SchedulerRegistry,
    @Optional() private readonly metrics?: Metrics,
  ) {
    this.opts = resolvePollerOptions(options);
    const creds = this.opts.clients;
    // The injected client serves the first OAuth client (or the public endpoints); the others are its siblings.
    this.clients = creds.length === 0 ? [client] : creds.map((c, i) => (i === 0 && c.id === this.opts.clientId ? client : client.withCredentials(c.id, c.secret)));
    this.active = this.clients.map(() => 0);
    this.started = this.clients.map(() => 0);
    this.rereads = new CallBudget(this.budgetPerMinute, this.clock.now().getTime());
    this.firstReads = new CallBudget(this.clients.length * this.opts.quotaPerMinute * this.opts.firstReadShare, this.clock.now().getTime());
  }

  get enabled(): boolean {
    return this.opts.enabled;
  }

  private get budgetPerMinute(): number {
    return this.clients.length * this.opts.quotaPerMinute * this.opts.budgetShare;
  }

  onApplicationBootstrap(): void {
    if (!this.opts.enabled) return;
    this.running = true;
    // Not unref'd: in a pipeline-only process this timer is what keeps the process alive.
    const timer = setInterval(() => void this.tick(), this.opts.tickMs);
    if (this.scheduler) this.scheduler.addInterval(TICK_INTERVAL_NAME, timer);
    else this.timer = timer;
    void this.tick();
  }

  /**
   * Says what the poller does, at its first look and whenever that changes: polling, or nothing to
   * poll (it then sends nothing, and an operator reading "polling every 60000 ms" would think otherwise).
   */
  private announce(): void {
    const idle = this.tracked.length === 0;
    if (idle === this.announcedIdle) return;
    this.announcedIdle = idle;
    const lookMs = Math.min(TRACKED_REFRESH_MS, this.opts.pollIntervalMs);
    if (idle) {
      this.logger.log(`nothing to poll on Reddit yet (no webhook and no TRACKED_SUBREDDITS): no request is sent; looking for a subreddit every ${lookMs / 1000} s`);
      return;
    }
    const what = this.client.oauth || this.clients.length > 1 ? `app-only OAuth, ${this.clients.length} client(s)` : 'public endpoints';
    this.logger.log(`polling Reddit (${this.opts.baseUrl}, ${what}) every ${this.opts.pollIntervalMs} ms for ${this.tracked.length} subreddit(s), ${this.opts.concurrency} listings at a time`);
  }

  /** Starts polls of due subreddits, grouped, while there is room. */
  async tick(): Promise<void> {
    if (!this.running || this.ticking) return;
    this.ticking = true;
    try {
      const now = this.clock.now().getTime();
      if (now - this.trackedAt >= Math.min(TRACKED_REFRESH_MS, this.opts.pollIntervalMs)) {
        this.tracked = await this.trackedSubreddits();
        this.trackedAt = now;
        this.announce();
        const unknown = this.tracked.filter((s) => !this.rates.has(s));
        if (now - this.ratesAt >= this.opts.rateRefreshMs) await this.refreshRates(this.tracked, now);
        else if (unknown.length > 0) await this.refreshRates(unknown, now);
      }
      if (now - this.sweptAt >= this.opts.retentionSweepMs) {
        this.sweptAt = now;
        await this.sweepRetention(now);
      }
      const due = this.tracked.filter((s) => !this.inflight.has(s) && (this.notBefore.get(s) ?? 0) <= now);
      if (due.length === 0) return;
      for (const s of due) if (!this.alone.has(s) && this.soloCheck(s, now)) this.alone.add(s);
      const units = planUnits(
        due.map((s) => ({ subreddit: s, postsPerHour: this.alone.has(s) ? null : (this.rates.get(s) ?? null) })),
        this.opts,
      );
      // Live polls before first reads (a cold start must not delay a busy subreddit's poll), then those waiting longest first.
      const waited = (u: PollUnit) => Math.min(...u.subreddits.map((s) => this.notBefore.get(s) ?? 0));
      const first = new Set(units.filter((u) => this.firstRead(u)));
      units.sort((a, b) => Number(first.has(a)) - Number(first.has(b)) || waited(a) - waited(b));
      const firstSlots = Math.max(1, this.opts.concurrency - 1);
      for (const unit of units) {
        if (!this.running || this.jobs.size >= this.opts.concurrency) break;
        const isFirst = first.has(unit);
        // A first read (and its backfill's later pages) is paid from the first-read budget, else
        // from what re-reads leave: first reads spread over the spare quota instead of bursting
        // through a whole window of it, and a slot is always left for live polls.
        if (isFirst && (this.firstReadsInFlight >= firstSlots || !this.payFirstRead(now))) continue;
        if (isFirst) this.firstReadsInFlight++;
        // Fewest in flight, then fewest started: polls that go one at a time (first reads) still spread.
        const c = this.clients.reduce((best, _, i) => (this.active[i] < this.active[best] || (this.active[i] === this.active[best] && this.started[i] < this.started[best]) ? i : best), 0);
        this.active[c]++;
        this.started[c]++;
        const job = this.pollUnit(unit.subreddits, this.clients[c])
          .catch((err) => {
            for (const sub of unit.subreddits) this.notBefore.set(sub, this.clock.now().getTime() + this.opts.pollIntervalMs);
            this.logger.error(`poll of ${unit.subreddits.map((s) => `r/${s}`).join(', ')} could not be recorded: ${(err as Error).message}`);
          })
          .finally(() => {
            for (const sub of unit.subreddits) this.inflight.delete(sub);
            this.jobs.delete(job);
            this.active[c]--;
            if (isFirst) this.firstReadsInFlight--;
            this.polls++;
          });
        this.jobs.add(job);
        for (const sub of unit.subreddits) this.inflight.set(sub, job);
      }
    } catch (err) {
      // Database unreachable or similar: the next tick tries again.
      this.logger.error(`poller tick failed: ${(err as Error).message}`);
    } finally {
      this.ticking = false;
    }
  }

  /**
   * Whether a subreddit that would be read in a multireddit is to be read alone next, to see that
   * Reddit still serves it (plan.ts soloCheckDue); the call comes out of the re-read budget.
   */
  private soloCheck(sub: string, now: number): boolean {
    const rate = this.rates.get(sub);
    if (rate === null || rate === undefined) return false; // read alone anyway
    // Nothing known (no post within the rate window, not read alone by this process): the last solo
    // read is taken to lie anywhere in the longest gap, so a restarted poller's checks spread over it.
    if (!this.quietSince.has(sub)) this.quietSince.set(sub, now - Math.random() * this.opts.soloCheckMaxMs);
    if (!soloCheckDue(rate, this.quietSince.get(sub)!, now, this.opts)) return false;
    if (this.rereads.available(now) < 1) return false;
    this.rereads.take(1, now);
    return true;
  }

  /** Takes one call for a first read from the first-read budget, else from the re-read budget; false when neither has one. */
  private payFirstRead(now: number): boolean {
    for (const budget of [this.firstReads, this.rereads]) {
      if (budget.available(now) < 1) continue;
      budget.take(1, now);
      return true;
    }
    return false;
  }

  /** A subreddit never read (no rate measured): its first poll is alone, and backfills. */
  private firstRead(unit: PollUnit): boolean {
    return unit.subreddits.length === 1 && !this.alone.has(unit.subreddits[0]) && (this.rates.get(unit.subreddits[0]) ?? null) === null;
  }

  /** Webhook subscriptions ∪ configured subreddits, lower case, sorted. */
  async trackedSubreddits(): Promise<string[]> {
    const all = new Set([...(await this.subscriptions.subredditsWithWebhooks()), ...this.opts.trackedSubreddits].map((s) => s.toLowerCase()));
    return [...all].sort();
  }

  /** Measured rates of the tracked set, the groups they make and what polling them costs (`trendhooks sources plan`). */
  async plan(): Promise<SourcesPlan> {
    const now = this.clock.now().getTime();
    const tracked = await this.trackedSubreddits();
    const rates = await this.measureRates(tracked, now);
    const units = planUnits(rates, this.opts);
    return { units, rates, summary: planSummary(units, rates, { ...this.opts, clients: this.clients.length }) };
  }

  private async measureRates(subs: readonly string[], now: number): Promise<SourceRate[]> {
    return (await this.measure(subs, now)).rates;
  }

  /** Rates, and each subreddit's newest stored post within the window. */
  private async measure(subs: readonly string[], now: number): Promise<{ rates: SourceRate[]; newest: Map<string, number> }> {
    if (subs.length === 0) return { rates: [], newest: new Map() };
    const [counts, sources] = await Promise.all([this.posts.countsSince(subs, now - this.opts.rateWindowMs), this.repo.sources(subs)]);
    // Never polled successfully: no rate yet (its first read is alone); polled without posts: quiet.
    const polled = new Set([...sources].filter(([, r]) => r.lastPolledAt !== null).map(([sub]) => sub));
    const rates = subs.map((s) => {
      const c = counts.get(s);
      return { subreddit: s, postsPerHour: c ? postRate(c.n, c.oldest, now, this.opts.rateWindowMs) : polled.has(s) ? 0 : null };
    });
    return { rates, newest: new Map([...counts].map(([s, c]) => [s, c.newest])) };
  }

  /** Rates from the stored posts; the re-read budget follows what the listings of the whole tracked set cost. */
  private async refreshRates(subs: readonly string[], now: number): Promise<void> {
    const measured = await this.measure(subs, now);
    for (const r of measured.rates) this.rates.set(r.subreddit, r.postsPerHour);
    for (const [s, at] of measured.newest) this.quietSince.set(s, Math.max(this.quietSince.get(s) ?? at, at));
    if (subs.length === this.tracked.length) {
      this.ratesAt = now;
      for (const s of [...this.rates.keys()]) if (!this.tracked.includes(s)) this.rates.delete(s);
      for (const s of [...this.quietSince.keys()]) if (!this.tracked.includes(s)) this.quietSince.delete(s);
    }
    // Never-read subreddits are first reads, paid from their own budget: they are not listings of every interval.
    const rates = this.tracked.map((s) => ({ subreddit: s, postsPerHour: this.rates.get(s) ?? null })).filter((r) => r.postsPerHour !== null);
    const summary = planSummary(planUnits(rates, this.opts), rates, { ...this.opts, clients: this.clients.length });
    this.rereads.setRate(rereadBudget(summary.listingCallsPerMinute, this.budgetPerMinute), now);
  }

  /** One poll of one subreddit or a group, under the leases of those it could claim. */
  private async pollUnit(subs: readonly string[], client: RedditClient): Promise<void> {
    const o = this.opts;
    const start = this.clock.now().getTime();
    const held: Claimed[] = [];
    for (const sub of subs) {
      const claim = await this.repo.claim(sub, this.owner, start, start + o.leaseMs, start - o.pollIntervalMs);
      if (claim.claimed) held.push({ sub, claim });
      else this.notBefore.set(sub, nextClaimAttempt(claim.state, this.owner, start, o.pollIntervalMs, o.tickMs));
    }
    if (held.length > 1) {
      // A multireddit would silently leave out a subreddit Reddit refuses (as another process may
      // have found): such a one is read alone, where Reddit says whether it still refuses it.
      for (const h of held.filter((x) => isUnavailable(x.claim.lastError))) {
        held.splice(held.indexOf(h), 1);
        this.alone.add(h.sub);
        await this.finish(h.sub, { ok: false, nextPollAt: this.clock.now().getTime(), lastError: h.claim.lastError, consecutiveFailures: h.claim.consecutiveFailures });
      }
    }
    if (held.length === 0) return;
    const names = held.map((h) => h.sub);
    let leaseUntil = start + o.leaseMs;
    const call: CallOptions = {
      signal: this.abort.signal,
      // Rate-limit waits can outlast a lease: renew it before each request, or stop if it was taken over.
      beforeRequest: async () => {
        const now = this.clock.now().getTime();
        if (now < leaseUntil - o.leaseMs / 2) return;
        for (const sub of names) if (!(await this.repo.renew(sub, this.owner, now + o.leaseMs, now))) throw new LeaseLostError(sub);
        leaseUntil = now + o.leaseMs;
      },
    };
    try {
      const listedAt = this.clock.now().getTime();
      // Never read successfully (first tracked): its history, as far as the listing and the pipeline's history window go.
      const backfill = held.length === 1 && held[0].claim.lastPolledAt === null && o.backfillPages > 1;
      const read = await this.readListing(names, held, client, call, backfill ? listedAt - o.backfillMs : null);
      if (read.kind === 'unavailable') {
        if (names.length > 1) {
          // Reddit refused the group: each is read alone next, which tells which one it was.
          for (const sub of names) this.alone.add(sub);
          this.logger.log(`a multireddit of ${names.length} subreddits answered ${read.status}; reading them one by one`);
          for (const h of held) await this.finish(h.sub, { ok: false, nextPollAt: this.clock.now().getTime(), lastError: h.claim.lastError, consecutiveFailures: h.claim.consecutiveFailures });
          return;
        }
        const [{ sub, claim }] = held;
        const failures = claim.consecutiveFailures + 1;
        const delay = unavailableDelay(failures, o.unavailableBackoffMs);
        const lastError = unavailableErrorClass(read.status, read.reason);
        // Never in a multireddit while refused: it would be left out silently.
        this.alone.add(sub);
        // Once per episode: a refused subreddit stays refused for hours, and would flood the log.
        if (!isUnavailable(claim.lastError)) {
          const status = sourceStatusOf({ lastError, lastPolledAt: null });
          this.logger.warn(`r/${sub} is unavailable: ${status.replace('_', ' ')} (${read.detail}); next try in ${Math.round(delay / 60_000)} min`);
        }
        this.metrics?.pollerError(sub);
        return this.finish(sub, { ok: false, nextPollAt: this.clock.now().getTime() + delay, lastError, consecutiveFailures: failures });
      }
      const unreachable = read.capped ? this.countUnreachable(held, read.posts, listedAt) : new Map<string, number>();
      // What the listing could not reach is unknown, not quiet: the detectors hear so before its buckets close.
      if (read.capped) for (const g of listingGaps(held, read.posts)) await this.pipeline.markGap(g.sub, g.fromMs, g.toMs);
      await this.store(read.posts, [], backfill);
      if (backfill) this.logger.log(`r/${names[0]} first read: backfilled ${read.posts.length} posts in ${read.pages} pages`);
      const seen = this.clock.now().getTime();
      for (const sub of names) {
        this.alone.delete(sub);
        // Read alone, Reddit served it; in a group, only its posts say so.
        const newest = Math.max(names.length === 1 ? seen : -Infinity, ...read.posts.filter((p) => p.subreddit === sub).map((p) => p.createdAtMs));
        if (newest > (this.quietSince.get(sub) ?? -Infinity)) this.quietSince.set(sub, newest);
        if ((this.rates.get(sub) ?? null) === null) {
          const own = read.posts.filter((p) => p.subreddit === sub && p.createdAtMs >= listedAt - o.rateWindowMs);
          this.rates.set(sub, own.length === 0 ? 0 : postRate(own.length, Math.min(...own.map((p) => p.createdAtMs)), listedAt, o.rateWindowMs));
        }
      }
      await this.reread(names, start, call);
      for (const sub of names) await this.pipeline.tick(sub, this.clock.now());
      for (const { sub, claim } of held) {
        if (isUnavailable(claim.lastError)) this.logger.log(`r/${sub} is readable again (it was ${sourceStatusOf(claim).replace('_', ' ')})`);
        else if (claim.consecutiveFailures > 0) this.logger.log(`r/${sub} polled again after ${claim.consecutiveFailures} failed polls`);
        await this.finish(sub, { ok: true, listedAt, nextPollAt: alignedNextPoll(start, o.pollIntervalMs), lastError: null, consecutiveFailures: 0, unreachable: unreachable.get(sub) });
      }
    } catch (err) {
      if (this.abort.signal.aborted) return; // shutting down: leases are released in one go
      if (err instanceof LeaseLostError) {
        this.logger.warn(`${err.message} mid-poll; another process polls it now`);
        for (const sub of names) this.notBefore.set(sub, this.clock.now().getTime() + o.pollIntervalMs);
        return;
      }
      const errorClass = err instanceof RedditRequestError ? err.errorClass : 'internal';
      // Reddit down or throttling: the client backs off for all its subreddits, so each stays due
      // and is read as soon as Reddit answers. Only errors of this subreddit's own back off per subreddit.
      const transient = TRANSIENT_CLASS.test(errorClass);
      for (const { sub, claim } of held) {
        const failures = claim.consecutiveFailures + 1;
        const delay = transient ? 0 : failureDelay(failures, o.pollIntervalMs, o.failureBackoffMaxMs);
        this.metrics?.pollerError(sub);
        this.logger.warn(`poll of r/${sub} failed (${failures} in a row): ${(err as Error).message}; ${transient ? 'next try once Reddit answers' : `next try in ${Math.round(delay / 1000)} s`}`);
        await this.finish(sub, { ok: false, nextPollAt: this.clock.now().getTime() + delay, lastError: errorClass, consecutiveFailures: failures });
      }
    }
  }

  /**
   * The listing of `names` (one subreddit, or a multireddit), paged with `after` until it reaches
   * the previous poll's start (less pageOverlapMs) of every subreddit that had one, the end of the
   * listing, or Reddit's 1,000-item cap. A backfill (`backfillFrom`, a first read) pages back to
   * that time instead, at most backfillPages pages, each page after the first paid from the re-read
   * budget; other never-read subreddits take one page.
   */
  private async readListing(
    names: string[],
    held: readonly Claimed[],
    client: RedditClient,
    call: CallOptions,
    backfillFrom: number | null = null,
  ): Promise<{ kind: 'ok'; posts: RedditPost[]; pages: number; capped: boolean } | Extract<ListingResult, { kind: 'unavailable' }>> {
    const marks = held.map((h) => h.claim.lastPolledAt).filter((m): m is number => m !== null);
    const stopAt = backfillFrom ?? (marks.length > 0 ? Math.min(...marks) - this.opts.pageOverlapMs : null);
    const cap = backfillFrom === null ? LISTING_CAP : Math.min(LISTING_CAP, this.opts.backfillPages * PAGE_SIZE);
    const posts: RedditPost[] = [];
    let after: string | null = null;
    let pages = 0;
    // Still short of the mark when Reddit's cap (or the end it serves at the cap) stopped the paging.
    let capped = false;
    for (let read = 0; read < cap; read += PAGE_SIZE) {
      if (backfillFrom !== null && read > 0) this.rereads.take(1, this.clock.now().getTime());
      const page = await client.fetchListing(names, after, call);
      pages++;
      if (page.kind === 'unavailable') {
        if (read === 0) return page;
        break; // refused mid-way: keep what the first pages said
      }
      posts.push(...page.posts);
      const full = page.posts.length + page.skipped >= PAGE_SIZE;
      if (!full || stopAt === null) {
        // The listing ended after full pages, still short of the mark: not the subreddit's first
        // post but Reddit's 1,000-item window, which new posts pushed the page being read past.
        if (!full && stopAt !== null && read > 0 && backfillFrom === null && posts.length > 0 && Math.min(...posts.map((p) => p.createdAtMs)) >= stopAt) capped = true;
        break;
      }
      const oldest = Math.min(...page.posts.map((p) => p.createdAtMs));
      if (page.posts.length > 0 && oldest < stopAt) break;
      capped = backfillFrom === null && (page.after === null || read + PAGE_SIZE >= cap);
      if (page.after === null) break;
      after = page.after;
    }
    return { kind: 'ok', posts, pages, capped };
  }

  /**
   * A listing that hit Reddit's 1,000-item cap before the last successful read's start left a
   * gap: each subreddit's posts in it are estimated from its rate in what was listed, counted in
   * trendhooks_reddit_posts_unreachable_total and in the subreddit's row (its status shows the
   * total), and logged: never silently skipped.
   */
  private countUnreachable(held: readonly Claimed[], posts: readonly RedditPost[], listedAt: number): Map<string, number> {
    const out = new Map<string, number>();
    for (const { sub, fromMs, toMs } of listingGaps(held, posts)) {
      const own = posts.filter((p) => p.subreddit === sub).length;
      const n = Math.round((own * (toMs - fromMs)) / Math.max(1, listedAt - toMs));
      if (n < 1) continue;
      out.set(sub, n);
      this.metrics?.redditPostsUnreachable(sub, n);
      this.logger.warn(`r/${sub}: about ${n} posts between ${new Date(fromMs).toISOString()} and ${new Date(toMs).toISOString()} are past Reddit's 1,000-item listing cap`);
    }
    return out;
  }

  /**
   * Re-reads within the budget: growth samples for the rising detector (recent posts of these
   * subreddits not seen in this poll), then, with what is left, any stored post of theirs not seen
   * for deletionCheckMs, so one removed on Reddit since is found.
   */
  private async reread(names: readonly string[], start: number, call: CallOptions): Promise<void> {
    const o = this.opts;
    const calls = this.rereads.available(this.clock.now().getTime());
    if (calls < 1) return;
    const ids = await this.posts.rereadCandidates(names, start - o.rereadMaxAgeMs, start - o.rereadMinGapMs, Math.min(o.rereadMaxPosts * names.length, calls * PAGE_SIZE));
    const room = calls * PAGE_SIZE - ids.length;
    if (room > 0) {
      const stale = await this.posts.rereadCandidates(names, start - o.retentionMs, start - o.deletionCheckMs, room);
      const asked = new Set(ids);
      for (const id of stale) if (!asked.has(id)) ids.push(id);
    }
    if (ids.length === 0) return;
    this.rereads.take(Math.ceil(ids.length / PAGE_SIZE), this.clock.now().getTime());
    const current = await this.clients[this.active.indexOf(Math.min(...this.active))].fetchByIds(ids, call);
    // Reddit leaves out of /by_id what it no longer serves at all: gone too.
    const got = new Set(current.map((p) => p.id));
    await this.store(current, ids.filter((id) => !got.has(id)));
  }

  /**
   * Stores what Reddit answered, keeping Reddit's rule that deleted content must go: posts it
   * marks removed or deleted (and `vanished` ids it no longer serves) are deleted, never stored
   * and never shown to the pipeline; posts whose author deleted the account lose the author.
   * Posts older than the retention are not stored.
   */
  private async store(posts: readonly RedditPost[], vanished: readonly string[] = [], backfill = false): Promise<void> {
    const oldest = this.clock.now().getTime() - this.opts.retentionMs;
    const gone = [...vanished, ...posts.filter((p) => p.gone === 'removed').map((p) => p.id)];
    const keep = posts.filter((p) => p.gone !== 'removed' && p.createdAtMs >= oldest);
    if (keep.length > 0) await this.ingest.upsertPosts(keep, { backfill });
    if (gone.length > 0) {
      const n = await this.ingest.removePosts(gone);
      if (n > 0) this.logger.log(`purged ${n} posts removed or deleted on Reddit`);
    }
    const anonymous = keep.filter((p) => p.gone === 'author_deleted').map((p) => p.id);
    if (anonymous.length > 0) await this.posts.anonymise(anonymous);
  }

  /** Deletes the posts created before the retention, in batches. */
  private async sweepRetention(now: number): Promise<void> {
    let total = 0;
    for (let n = RETENTION_BATCH; n === RETENTION_BATCH && this.running; total += n) n = await this.posts.purgeCreatedBefore(now - this.opts.retentionMs, RETENTION_BATCH);
    if (total > 0) this.logger.log(`deleted ${total} posts older than the retention (${Math.round(this.opts.retentionMs / 86_400_000)} days)`);
  }

  private async finish(sub: string, outcome: PollOutcome): Promise<void> {
    this.notBefore.set(sub, outcome.nextPollAt);
    const held = await this.repo.finish(sub, this.owner, outcome, this.clock.now().getTime());
    if (!held) this.logger.warn(`lease on r/${sub} expired during the poll; its outcome was not recorded`);
  }

  /** Stops scheduling, lets polls in flight finish (bounded), cancels the rest, and releases every lease. */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    if (this.scheduler?.doesExist('interval', TICK_INTERVAL_NAME)) this.scheduler.deleteInterval(TICK_INTERVAL_NAME);
    if (this.timer) clearInterval(this.timer);
    const settled = () => this.settled();
    const within = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());
    await Promise.race([settled(), within(this.opts.shutdownGraceMs)]);
    this.abort.abort();
    await Promise.race([settled(), within(1000)]);
    await this.repo.releaseAll(this.owner, this.clock.now().getTime()).catch((err) => this.logger.warn(`releasing poll leases failed: ${(err as Error).message}`));
    // The injected client closes itself at application shutdown; its siblings are the poller's.
    for (const c of this.clients) if (c !== this.client) await c.onApplicationShutdown();
  }

  /** Polls in flight (tests). */
  get inFlight(): number {
    return this.jobs.size;
  }

  /** Resolves when the polls in flight now have ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.jobs]);
  }
}

/**
 * The next poll after one that started at `start`: on the grid of the interval (epoch multiples),
 * at most one interval later. Subreddits first read at scattered times (one by one, after a
 * backoff) fall into one phase, so they become due together and can share listings; a subreddit
 * off the grid is read once a little early.
 */
export function alignedNextPoll(start: number, intervalMs: number): number {
  return Math.floor((start + intervalMs) / intervalMs) * intervalMs;
}

/**
 * Posts per hour from `n` posts stored within the window, the oldest at `oldest`. A subreddit read
 * for the first time holds one page: when that page (100 or more) spans less than the window, the
 * rate is over its span, not over a window it has not filled.
 */
export function postRate(n: number, oldest: number, now: number, windowMs: number): number {
  const span = now - oldest;
  if (n >= PAGE_SIZE && span < windowMs) return n / (Math.max(60_000, span) / 3_600_000);
  return n / (windowMs / 3_600_000);
}
