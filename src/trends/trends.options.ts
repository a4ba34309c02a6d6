import { ConfigurableModuleBuilder, Inject } from '@nestjs/common';
import { INT_SETTINGS, checkIntOption, checkOption, checkRedditBaseUrl, checkRedditUserAgent, checkSubredditNames } from '../config/settings';
import { checkedOptions } from '../core/configured-module';
import type { TrendParams } from './subreddit-trends';

/** How much stored history rebuilds a subreddit's detector state, and how far back a backfill reads: 3 days. */
export const DEFAULT_HISTORY_MS = 3 * 24 * 3600_000;

export interface TrendsModuleOptions {
  /** Detector parameters; the documented defaults (src/trends/detectors/README.md) when absent. */
  params?: TrendParams;
  /** How much stored history rebuilds a subreddit's detector state on first sight (and how far back a first read backfills). Default 3 days. */
  historyMs?: number;
  /** Run the Reddit poller in this process (roles `pipeline` and `all`). Default false. */
  poller?: boolean;
  /** Subreddits followed besides those webhooks subscribe to. */
  trackedSubreddits?: string[];
  /** Origin of every Reddit call, token endpoint included. Default https://www.reddit.com (API calls then go to oauth.reddit.com under OAuth). */
  redditBaseUrl?: string;
  /** App-only OAuth when both are set; the public endpoints otherwise. */
  redditClientId?: string | null;
  redditClientSecret?: string | null;
  /** More OAuth clients sharing the load (`REDDIT_CLIENTS`); each has its own token and its own rate-limit budget. */
  redditClients?: { id: string; secret: string }[];
  /** User-Agent of every Reddit call; Reddit asks for `<platform>:<app id>:<version> (by /u/<user>)`. Default trendhooks' own. */
  redditUserAgent?: string | null;
  /** How often each subreddit is polled. Default 60 000 ms. */
  pollIntervalMs?: number;
  /** Subreddits polled in parallel by this process. Default 4. */
  pollConcurrency?: number;
  /** Total time of one Reddit request. Default 10 000 ms. */
  redditTimeoutMs?: number;
  /** The poller deletes stored posts created longer ago, and stores none older. Default 30. */
  postsRetentionDays?: number;
  /** Finer poller and client knobs (backoffs, leases, re-reads); tests shorten them. */
  pollerTuning?: Partial<PollerTuning>;
}

/** Defaults in resolvePollerTuning (src/trends/reddit/tuning.ts). */
export interface PollerTuning {
  /** Retries of one Reddit request after a 429, 5xx, timeout or network error. */
  maxRetries: number;
  /** First retry delay; doubles per retry, with jitter (half fixed, half random). */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Cap on a Retry-After or X-Ratelimit-Reset wait. */
  maxRetryAfterMs: number;
  /** Largest response body read. */
  maxBodyBytes: number;
  /** How long a claimed subreddit stays with its poller; renewed before each request of a long poll. */
  leaseMs: number;
  /** After failed polls a subreddit waits pollIntervalMs · 2^(failures−1), at most this. */
  failureBackoffMaxMs: number;
  /** A subreddit Reddit answers 3xx/403/404 for waits this long (doubling, up to 8×) before it is tried again. */
  unavailableBackoffMs: number;
  /** Posts younger than this are re-read for score and comment growth. Default: the rising detector's maxAgeMs (12 h). */
  rereadMaxAgeMs: number;
  /** A post is re-read only when its last sighting is at least this old. Default: the rising detector's minGapMs (10 min). */
  rereadMinGapMs: number;
  /** At most this many posts re-read per poll (100 per request), newest first. */
  rereadMaxPosts: number;
  /** How often due subreddits are looked for. Default min(1 s, pollIntervalMs / 4). */
  tickMs: number;
  /** Shutdown waits this long for polls in flight before it cancels them. */
  shutdownGraceMs: number;
  /** At most this many subreddits in one multireddit listing. Default 100. */
  maxBatchSubreddits: number;
  /** Subreddits are grouped while the group's expected posts per poll stay under this. Default 50 (half a page). */
  batchPostsPerPoll: number;
  /** Reddit's queries per minute per client. Default 100 under OAuth, 10 without. */
  quotaPerMinute: number;
  /** The share of the quota the poller plans to use (re-reads get what listings leave). Default 0.6. */
  budgetShare: number;
  /**
   * First reads of never-read subreddits (a cold start, new webhooks) may take this share of the
   * quota on top of budgetShare, plus what re-reads leave of theirs. Default 0.3 (90 % in all).
   */
  firstReadShare: number;
  /** Post rates are measured over this much stored history. Default 24 h. */
  rateWindowMs: number;
  /** Rates and groups are recomputed this often. Default 5 min. */
  rateRefreshMs: number;
  /** A listing pages back to the previous poll's start minus this (posts Reddit lists a little late). Default 60 s. */
  pageOverlapMs: number;
  /** Every stored post is re-read at least this often (within the re-read budget), so one removed on Reddit is found and purged. Default 40 h. */
  deletionCheckMs: number;
  /** How often posts past the retention are deleted. Default 1 h. */
  retentionSweepMs: number;
  /**
   * A subreddit read in a multireddit (which silently leaves out members Reddit no longer serves)
   * is read alone once its measured rate predicts this many posts since its last post and none came. Default 8.
   */
  silencePosts: number;
  /** … but not before it has been silent this long. Default 5 poll intervals. */
  silenceMinMs: number;
  /** Every subreddit read in multireddits is read alone at least this often, however quiet. Default 24 h. */
  soloCheckMaxMs: number;
  /**
   * Pages of 100 a subreddit's first read takes (its backfill), at most Reddit's 10 (1,000 posts); 1 = no backfill.
   * The backfill stops earlier at the end of the listing or at posts older than `historyMs`. Default 10.
   */
  backfillPages: number;
}

export const { ConfigurableModuleClass: TrendsConfigurableModule, MODULE_OPTIONS_TOKEN: TRENDS_OPTIONS } =
  new ConfigurableModuleBuilder<TrendsModuleOptions>()
    .setClassMethodName('forRoot')
    // Global, and exporting only the two hooks the modules below it consume (see TrendsModule).
    .setExtras({}, (definition) => ({ ...checkedOptions(definition, checkTrendsOptions), global: true }))
    .build();

/** `@InjectTrendsOptions() options: TrendsModuleOptions`: what forRoot / forRootAsync was given. */
export const InjectTrendsOptions = (): ParameterDecorator & PropertyDecorator => Inject(TRENDS_OPTIONS);

/** TrendsModule's options, checked at start by the standalone's checks of the same REDDIT_* settings. */
export function checkTrendsOptions(o: TrendsModuleOptions): void {
  const what = (option: string) => `TrendsModule's ${option}`;
  checkOption('TRACKED_SUBREDDITS', what('trackedSubreddits'), o.trackedSubreddits, checkSubredditNames);
  checkOption('REDDIT_BASE_URL', what('redditBaseUrl'), o.redditBaseUrl, checkRedditBaseUrl);
  checkOption('REDDIT_USER_AGENT', what('redditUserAgent'), o.redditUserAgent ?? undefined, checkRedditUserAgent);
  if ((o.redditClientId == null) !== (o.redditClientSecret == null)) {
    throw new Error("REDDIT_CLIENT_ID and REDDIT_CLIENT_SECRET (TrendsModule's redditClientId and redditClientSecret) go together: give both or neither");
  }
  checkIntOption(INT_SETTINGS.redditPollIntervalMs, o.pollIntervalMs, what('pollIntervalMs'));
  checkIntOption(INT_SETTINGS.redditPollConcurrency, o.pollConcurrency, what('pollConcurrency'));
  checkIntOption(INT_SETTINGS.redditTimeoutMs, o.redditTimeoutMs, what('redditTimeoutMs'));
  checkIntOption(INT_SETTINGS.postsRetentionDays, o.postsRetentionDays, what('postsRetentionDays'));
}
