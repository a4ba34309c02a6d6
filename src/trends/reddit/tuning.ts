import { resolveRisingParams } from '../detectors';
import { DEFAULT_HISTORY_MS, type PollerTuning, type TrendsModuleOptions } from '../trends.options';
import { LISTING_CAP, PAGE_SIZE } from './plan';

export const DEFAULT_REDDIT_BASE_URL = 'https://www.reddit.com';
/** Where API calls go under app-only OAuth when the base is Reddit itself. */
export const REDDIT_OAUTH_API_URL = 'https://oauth.reddit.com';

export interface ResolvedPollerOptions extends PollerTuning {
  enabled: boolean;
  baseUrl: string;
  clientId: string | null;
  clientSecret: string | null;
  /** Every OAuth client (the REDDIT_CLIENT_ID one first); empty without OAuth. */
  clients: { id: string; secret: string }[];
  /** null: the client's default (USER_AGENT). */
  userAgent: string | null;
  pollIntervalMs: number;
  concurrency: number;
  timeoutMs: number;
  trackedSubreddits: string[];
  retentionMs: number;
  /** A backfill reads no further back than this: the history the pipeline warms from (historyMs), within the retention. */
  backfillMs: number;
}

/** TrendsModuleOptions with every poller and client default filled in. */
export function resolvePollerOptions(o: TrendsModuleOptions): ResolvedPollerOptions {
  const rising = resolveRisingParams(o.params?.rising);
  const pollIntervalMs = o.pollIntervalMs ?? 60_000;
  const timeoutMs = o.redditTimeoutMs ?? 10_000;
  const t = o.pollerTuning ?? {};
  return {
    enabled: o.poller ?? false,
    baseUrl: (o.redditBaseUrl ?? DEFAULT_REDDIT_BASE_URL).replace(/\/+$/, ''),
    clientId: o.redditClientId ?? null,
    clientSecret: o.redditClientSecret ?? null,
    clients: allClients(o),
    userAgent: o.redditUserAgent ?? null,
    pollIntervalMs,
    concurrency: o.pollConcurrency ?? 4,
    timeoutMs,
    trackedSubreddits: o.trackedSubreddits ?? [],
    retentionMs: (o.postsRetentionDays ?? 30) * 24 * 3600_000,
    maxRetries: t.maxRetries ?? 3,
    backoffBaseMs: t.backoffBaseMs ?? 1000,
    backoffMaxMs: t.backoffMaxMs ?? 60_000,
    maxRetryAfterMs: t.maxRetryAfterMs ?? 10 * 60_000,
    maxBodyBytes: t.maxBodyBytes ?? 16 * 1024 * 1024,
    // A poll is a handful of requests, each within the timeout, plus rate-limit waits; the lease is
    // also renewed before every request, so this only bounds how long a crashed poller blocks others.
    leaseMs: t.leaseMs ?? Math.max(60_000, 4 * timeoutMs),
    failureBackoffMaxMs: t.failureBackoffMaxMs ?? 30 * 60_000,
    unavailableBackoffMs: t.unavailableBackoffMs ?? 30 * 60_000,
    rereadMaxAgeMs: t.rereadMaxAgeMs ?? rising.maxAgeMs,
    rereadMinGapMs: t.rereadMinGapMs ?? rising.minGapMs,
    rereadMaxPosts: t.rereadMaxPosts ?? 300,
    tickMs: t.tickMs ?? Math.max(10, Math.min(1000, Math.floor(pollIntervalMs / 4))),
    shutdownGraceMs: t.shutdownGraceMs ?? Math.max(5000, timeoutMs),
    maxBatchSubreddits: t.maxBatchSubreddits ?? 100,
    batchPostsPerPoll: t.batchPostsPerPoll ?? 50,
    quotaPerMinute: t.quotaPerMinute ?? (allClients(o).length > 0 ? 100 : 10),
    budgetShare: t.budgetShare ?? 0.6,
    firstReadShare: t.firstReadShare ?? 0.3,
    rateWindowMs: t.rateWindowMs ?? 24 * 3600_000,
    rateRefreshMs: t.rateRefreshMs ?? 5 * 60_000,
    pageOverlapMs: t.pageOverlapMs ?? 60_000,
    deletionCheckMs: t.deletionCheckMs ?? 40 * 3600_000,
    retentionSweepMs: t.retentionSweepMs ?? 3600_000,
    silencePosts: t.silencePosts ?? 8,
    silenceMinMs: t.silenceMinMs ?? 5 * pollIntervalMs,
    soloCheckMaxMs: t.soloCheckMaxMs ?? 24 * 3600_000,
    backfillPages: t.backfillPages ?? LISTING_CAP / PAGE_SIZE,
    backfillMs: Math.min(o.historyMs ?? DEFAULT_HISTORY_MS, (o.postsRetentionDays ?? 30) * 24 * 3600_000),
  };
}

function allClients(o: TrendsModuleOptions): { id: string; secret: string }[] {
  const out = o.redditClientId && o.redditClientSecret ? [{ id: o.redditClientId, secret: o.redditClientSecret }] : [];
  for (const c of o.redditClients ?? []) if (!out.some((x) => x.id === c.id)) out.push(c);
  return out;
}
