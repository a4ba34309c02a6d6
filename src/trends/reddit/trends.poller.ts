import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CLOCK, Clock } from '../../common/clock';
import { Metrics } from '../../metrics/metrics.service';
import { IngestService } from '../../posts/ingest.service';
import { TrendsPipeline } from '../trends.pipeline';
import { TRENDS_OPTIONS, TrendsModuleOptions } from '../trends.options';
import { RedditClient, RedditRequestError } from './reddit.client';
import { SourceState, TrendSourceLeaseStore } from './trend-source-lease.store';
import { resolvePollerOptions, ResolvedPollerOptions } from './tuning';

const TICK_INTERVAL_NAME = 'trendhooks-reddit-poll';
/** The tracked set is re-read at least this often (and at least once per poll interval). */
const TRACKED_REFRESH_MS = 10_000;

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

/**
 * Polls Reddit for every tracked subreddit (webhook subscriptions ∪ TRACKED_SUBREDDITS) every
 * pollIntervalMs: new posts → posts store (the pipeline listens) → re-read of recent posts for
 * growth → store again → pipeline tick. A few subreddits run in parallel on one client (one
 * rate-limit budget). Each poll runs under a lease in `trend_sources`, so across processes on one
 * database a subreddit is never polled twice at once; failures and unavailable subreddits back off
 * through the same row.
 */
@Injectable()
export class TrendsPoller implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('TrendsPoller');
  /** Lease owner: unique per process start. */
  readonly owner = `${hostname().slice(0, 40)}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly opts: ResolvedPollerOptions;
  private readonly inflight = new Map<string, Promise<void>>();
  /** Per subreddit, no claim is tried before this (learnt from its row); absent = now. */
  private readonly notBefore = new Map<string, number>();
  private tracked: string[] = [];
  private trackedAt = -Infinity;
  private running = false;
  private ticking = false;
  private readonly abort = new AbortController();
  private timer?: NodeJS.Timeout;
  /** Polls completed (successful or not), for tests and metrics. */
  polls = 0;

  constructor(
    private readonly client: RedditClient,
    private readonly repo: TrendSourceLeaseStore,
    private readonly ingest: IngestService,
    private readonly pipeline: TrendsPipeline,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(TRENDS_OPTIONS) options: TrendsModuleOptions,
    @Optional() private readonly scheduler?: SchedulerRegistry,
    @Optional() private readonly metrics?: Metrics,
  ) {
    this.opts = resolvePollerOptions(options);
  }

  get enabled(): boolean {
    return this.opts.enabled;
  }

  onApplicationBootstrap(): void {
    if (!this.opts.enabled) return;
    this.running = true;
    const what = this.client.oauth ? 'app-only OAuth' : 'public endpoints';
    this.logger.log(`polling Reddit (${this.opts.baseUrl}, ${what}) every ${this.opts.pollIntervalMs} ms, ${this.opts.concurrency} subreddits at a time`);
    // Not unref'd: in a pipeline-only process this timer is what keeps the process alive.
    const timer = setInterval(() => void this.tick(), this.opts.tickMs);
    if (this.scheduler) this.scheduler.addInterval(TICK_INTERVAL_NAME, timer);
    else this.timer = timer;
    void this.tick();
  }

  /** Starts polls of due subreddits while there is room. */
  async tick(): Promise<void> {
    if (!this.running || this.ticking) return;
    this.ticking = true;
    try {
      const now = this.clock.now().getTime();
      if (now - this.trackedAt >= Math.min(TRACKED_REFRESH_MS, this.opts.pollIntervalMs)) {
        this.tracked = await this.trackedSubreddits();
        this.trackedAt = now;
      }
      const due = this.tracked
        .filter((s) => !this.inflight.has(s) && (this.notBefore.get(s) ?? 0) <= now)
        .sort((a, b) => (this.notBefore.get(a) ?? 0) - (this.notBefore.get(b) ?? 0));
      for (const sub of due) {
        if (!this.running || this.inflight.size >= this.opts.concurrency) break;
        const p = this.pollOne(sub)
          .catch((err) => {
            this.notBefore.set(sub, this.clock.now().getTime() + this.opts.pollIntervalMs);
            this.logger.error(`poll of r/${sub} could not be recorded: ${(err as Error).message}`);
          })
          .finally(() => {
            this.inflight.delete(sub);
            this.polls++;
          });
        this.inflight.set(sub, p);
      }
    } catch (err) {
      // Database unreachable or similar: the next tick tries again.
      this.logger.error(`poller tick failed: ${(err as Error).message}`);
    } finally {
      this.ticking = false;
    }
  }

  /** Webhook subscriptions ∪ configured subreddits, lower case, sorted. */
  async trackedSubreddits(): Promise<string[]> {
    const all = new Set([...(await this.repo.webhookSubreddits()), ...this.opts.trackedSubreddits].map((s) => s.toLowerCase()));
    return [...all].sort();
  }

  /** One poll of one subreddit, under its lease (nothing when another process has it or it is not due). */
  private async pollOne(sub: string): Promise<void> {
    const o = this.opts;
    const start = this.clock.now().getTime();
    const claim = await this.repo.claim(sub, this.owner, start, start + o.leaseMs, start - o.pollIntervalMs);
    if (!claim.claimed) {
      this.notBefore.set(sub, nextClaimAttempt(claim.state, this.owner, start, o.pollIntervalMs, o.tickMs));
      return;
    }
    let leaseUntil = start + o.leaseMs;
    const call = {
      signal: this.abort.signal,
      // Rate-limit waits can outlast a lease: renew it before each request, or stop if it was taken over.
      beforeRequest: async () => {
        const now = this.clock.now().getTime();
        if (now < leaseUntil - o.leaseMs / 2) return;
        if (!(await this.repo.renew(sub, this.owner, now + o.leaseMs, now))) throw new LeaseLostError(sub);
        leaseUntil = now + o.leaseMs;
      },
    };
    try {
      const listing = await this.client.fetchNew(sub, call);
      if (listing.kind === 'unavailable') {
        const failures = claim.consecutiveFailures + 1;
        const delay = unavailableDelay(failures, o.unavailableBackoffMs);
        // Once per episode: a refused subreddit stays refused for hours, and would flood the log.
        if (!claim.lastError?.startsWith('unavailable_')) {
          this.logger.warn(`r/${sub} is unavailable (${listing.detail}): unknown, private or banned; next try in ${Math.round(delay / 60_000)} min`);
        }
        this.metrics?.pollerError(sub);
        return this.finish(sub, { ok: false, nextPollAt: this.clock.now().getTime() + delay, lastError: `unavailable_${listing.status}`, consecutiveFailures: failures });
      }
      await this.ingest.upsertPosts(listing.posts);
      // Growth samples for the rising detector: recent posts not seen in this poll's listing.
      const ids = await this.repo.postsToReread(sub, start - o.rereadMaxAgeMs, start - o.rereadMinGapMs, o.rereadMaxPosts);
      if (ids.length > 0) {
        const current = await this.client.fetchByIds(ids, call);
        if (current.length > 0) await this.ingest.upsertPosts(current);
      }
      await this.pipeline.tick(sub, this.clock.now());
      if (claim.consecutiveFailures > 0) this.logger.log(`r/${sub} polled again after ${claim.consecutiveFailures} failed polls`);
      await this.finish(sub, { ok: true, nextPollAt: start + o.pollIntervalMs, lastError: null, consecutiveFailures: 0 });
    } catch (err) {
      if (this.abort.signal.aborted) return; // shutting down: leases are released in one go
      if (err instanceof LeaseLostError) {
        this.logger.warn(`${err.message} mid-poll; another process polls it now`);
        this.notBefore.set(sub, this.clock.now().getTime() + o.pollIntervalMs);
        return;
      }
      const failures = claim.consecutiveFailures + 1;
      const errorClass = err instanceof RedditRequestError ? err.errorClass : 'internal';
      const delay = failureDelay(failures, o.pollIntervalMs, o.failureBackoffMaxMs);
      this.metrics?.pollerError(sub);
      this.logger.warn(`poll of r/${sub} failed (${failures} in a row): ${(err as Error).message}; next try in ${Math.round(delay / 1000)} s`);
      await this.finish(sub, { ok: false, nextPollAt: this.clock.now().getTime() + delay, lastError: errorClass, consecutiveFailures: failures });
    }
  }

  private async finish(sub: string, outcome: { ok: boolean; nextPollAt: number; lastError: string | null; consecutiveFailures: number }): Promise<void> {
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
  }

  /** Polls in flight (tests). */
  get inFlight(): number {
    return this.inflight.size;
  }

  /** Resolves when the polls in flight now have ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.inflight.values()]);
  }
}
