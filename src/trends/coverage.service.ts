import { Inject, Injectable, Logger, OnModuleInit, Optional } from '@nestjs/common';
import { WebhookSubscriptions } from '../delivery/subscription-source';
import { Metrics } from '../metrics/metrics.service';
import { parseSubredditParam } from '../posts/posts.service';
import { SOURCE_STATUSES, SourceStatus, SourceStatusReader } from '../webhooks/source-status';
import { sourceStatusOf } from './coverage';
import { SubredditCoverageResource, toSubredditCoverageResource } from './dto/subreddit-coverage.resource';
import { TrendSourceLeaseStore } from './reddit/trend-source-lease.store';
import { TRENDS_OPTIONS, TrendsModuleOptions } from './trends.options';

/** A scrape reads the gauge once; a second scrape within this reuses the counts. */
const COUNTS_MAX_AGE_MS = 1000;

/**
 * Coverage: whether trendhooks can read a subreddit, from what the poller records in
 * `trend_sources` (asked of its store). Answers `GET /v1/subreddits/{subreddit}`, gives the
 * webhooks API each webhook's `source_status`, and counts the tracked subreddits by status for
 * `/metrics` (`trendhooks_subreddits{status}`).
 */
@Injectable()
export class SubredditCoverageService extends SourceStatusReader implements OnModuleInit {
  private readonly logger = new Logger('Metrics');
  private readonly configured: Set<string>;
  private last?: { at: number; counts: Promise<Map<string, number> | null> };

  constructor(
    private readonly store: TrendSourceLeaseStore,
    private readonly subscriptions: WebhookSubscriptions,
    @Inject(TRENDS_OPTIONS) options: TrendsModuleOptions,
    @Optional() private readonly metrics?: Metrics,
  ) {
    super();
    this.configured = new Set((options.trackedSubreddits ?? []).map((s) => s.toLowerCase()));
  }

  onModuleInit(): void {
    this.metrics?.registerLabelledGauge({
      name: 'trendhooks_subreddits',
      help: 'Tracked subreddits by what their last read met (ok, pending, private, quarantined, banned, not_found, throttled, error)',
      label: 'status',
      values: SOURCE_STATUSES,
      collect: () => this.countsByStatus(),
    });
  }

  /**
   * `GET /v1/subreddits/{subreddit}` for `customerId`: tracked when one of its webhooks subscribes
   * to it or the operator tracks it (TRACKED_SUBREDDITS, the same for every customer). Otherwise
   * `status: "untracked"` with nothing of earlier reads, not 404: whether, and how lately, trendhooks
   * reads it would tell that another customer follows it.
   */
  async subreddit(raw: string, customerId: string): Promise<SubredditCoverageResource> {
    const subreddit = parseSubredditParam(raw);
    const tracked = this.configured.has(subreddit) || (await this.subscriptions.hasWebhook(subreddit, customerId));
    if (!tracked) return toSubredditCoverageResource(subreddit, false, 'untracked', undefined);
    const row = (await this.store.sources([subreddit])).get(subreddit);
    return toSubredditCoverageResource(subreddit, true, sourceStatusOf(row), row);
  }

  async sourceStatuses(subreddits: readonly string[]): Promise<Map<string, SourceStatus>> {
    const unique = [...new Set(subreddits)];
    if (unique.length === 0) return new Map();
    const rows = await this.store.sources(unique);
    return new Map(unique.map((s) => [s, sourceStatusOf(rows.get(s))]));
  }

  // A database outage must not fail the whole scrape: the gauge keeps its last values.
  private countsByStatus(): Promise<Map<string, number> | null> {
    const now = Date.now();
    if (!this.last || now - this.last.at > COUNTS_MAX_AGE_MS) {
      const counts = (async () => {
        const tracked = new Set([...(await this.subscriptions.subredditsWithWebhooks()).map((s) => s.toLowerCase()), ...this.configured]);
        const out = new Map<string, number>();
        for (const status of (await this.sourceStatuses([...tracked])).values()) out.set(status, (out.get(status) ?? 0) + 1);
        return out;
      })().catch((err: Error) => {
        this.logger.warn(`subreddit coverage metrics unavailable: ${err.message}`);
        return null;
      });
      this.last = { at: now, counts };
    }
    return this.last.counts;
  }
}
