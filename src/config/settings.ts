import { SUBREDDIT_INPUT } from '../common/reddit-names';

/**
 * The checks of the settings a host also gives a module (forRoot / forRootAsync), shared by the
 * standalone's environment (loadConfig) and the modules' options: one function per setting, so a
 * value the standalone refuses at start is refused by a host's module at start too, naming the
 * environment variable (and the option). Without them a host started and failed later, at a first
 * request, poll or delivery, with the cause only in the log. A leaf file: the modules import it.
 */

/** A whole-number setting: its environment variable and range. */
export interface IntSetting {
  env: string;
  min: number;
  max: number;
  /**
   * The least a module's option may be, when below the standalone's `min`: a host (or a test) may
   * shorten a timing that an operator's environment may not. Default `min`.
   */
  hostMin?: number;
}

const ms = (env: string, min: number, max: number, hostMin = 1): IntSetting => ({ env, min, max, hostMin });

/** The ranges; loadConfig reads the same ones. */
export const INT_SETTINGS = {
  cursorTtlSeconds: { env: 'CURSOR_TTL_SECONDS', min: 1, max: 31 * 86_400 },
  portalLinkTtlSeconds: { env: 'PORTAL_LINK_TTL_SECONDS', min: 60, max: 86_400 },
  portalSessionTtlSeconds: { env: 'PORTAL_SESSION_TTL_SECONDS', min: 60, max: 86_400 },
  portalExchangesPerMinute: { env: 'PORTAL_EXCHANGES_PER_MINUTE', min: 1, max: 10_000 },
  ssrfDnsTimeoutMs: ms('SSRF_DNS_TIMEOUT_MS', 100, 60_000),
  ssrfDnsCacheTtlMs: { env: 'SSRF_DNS_CACHE_TTL_MS', min: 0, max: 86_400_000 },
  ssrfDnsNegativeTtlMs: { env: 'SSRF_DNS_NEGATIVE_TTL_MS', min: 0, max: 3_600_000 },
  ssrfDnsCacheMaxEntries: { env: 'SSRF_DNS_CACHE_MAX_ENTRIES', min: 1, max: 1_000_000 },
  ssrfDnsMaxConcurrentPerCustomer: { env: 'SSRF_DNS_MAX_CONCURRENT_PER_CUSTOMER', min: 1, max: 1024 },
  deliveryTimeoutMs: ms('DELIVERY_TIMEOUT_MS', 100, 120_000),
  deliveryLeaseMs: ms('DELIVERY_LEASE_MS', 1000, 3_600_000),
  deliveryConcurrency: { env: 'DELIVERY_CONCURRENCY', min: 1, max: 1024 },
  deliveryBatchSize: { env: 'DELIVERY_BATCH_SIZE', min: 1, max: 1000 },
  deliveryPollIntervalMs: ms('DELIVERY_POLL_INTERVAL_MS', 10, 60_000),
  deliveryCircuitFailures: { env: 'DELIVERY_CIRCUIT_FAILURES', min: 0, max: 1000 },
  deliveryCircuitThrottle: { env: 'DELIVERY_CIRCUIT_THROTTLE', min: 1, max: 1024 },
  deliveryCircuitPauseMs: ms('DELIVERY_CIRCUIT_PAUSE_MS', 100, 86_400_000),
  deliveryCircuitMaxPauseMs: ms('DELIVERY_CIRCUIT_MAX_PAUSE_MS', 100, 86_400_000),
  /** 0 (or null, or `off`): never. */
  webhookDisableAfterMs: { env: 'WEBHOOK_DISABLE_AFTER', min: 1000, max: 365 * 86_400_000 },
  redditPollIntervalMs: ms('REDDIT_POLL_INTERVAL_MS', 1000, 3_600_000),
  redditPollConcurrency: { env: 'REDDIT_POLL_CONCURRENCY', min: 1, max: 64 },
  redditTimeoutMs: ms('REDDIT_TIMEOUT_MS', 100, 120_000),
  postsRetentionDays: { env: 'POSTS_RETENTION_DAYS', min: 1, max: 3650 },
} satisfies Record<string, IntSetting>;

/** `ENV_NAME (Module's option)`: how a module's error names the setting. */
export function settingName(env: string, option: string): string {
  return `${env} (${option})`;
}

/** A module's whole-number option: undefined (the default applies) or an integer in the setting's range. */
export function checkIntOption(setting: IntSetting, value: number | undefined, option: string): void {
  if (value === undefined) return;
  const min = setting.hostMin ?? setting.min;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > setting.max) {
    throw new Error(`${settingName(setting.env, option)} must be an integer from ${min} to ${setting.max}, got ${String(value)}`);
  }
}

/** A check's message prefixed with the setting it is about: `NAME must …`, `NAME: "x" is not …`. */
export function namedMessage(name: string, message: string): string {
  if (message.startsWith(name)) return message;
  return message.startsWith('must ') ? `${name} ${message}` : `${name}: ${message}`;
}

/** Runs a setting's check on a module's option, its error naming the setting. */
export function checkOption<T>(env: string, option: string, value: T | undefined, check: (v: T) => unknown): void {
  if (value === undefined) return;
  try {
    check(value);
  } catch (err) {
    throw new Error(namedMessage(settingName(env, option), (err as Error).message), { cause: err });
  }
}

/** PORTAL_BASE_URL / PortalModule's baseUrl. */
export function checkPortalBaseUrl(raw: string): string {
  if (typeof raw !== 'string' || !/^https?:\/\/[^/?#]+(\/[^?#]*)?$/i.test(raw)) throw new Error(`must be an absolute http(s) URL without query or fragment, got ${JSON.stringify(raw)}`);
  return raw;
}

/** One entry of PORTAL_FRAME_ANCESTORS / PortalModule's frameAncestors. */
export function checkFrameAncestor(raw: string): string {
  if (typeof raw !== 'string' || !/^(https?:\/\/[A-Za-z0-9.*-]+(:\d+)?|'self')$/.test(raw)) throw new Error(`${JSON.stringify(raw)} is not an origin such as https://app.example.com, or 'self'`);
  return raw;
}

/** REDDIT_BASE_URL / TrendsModule's redditBaseUrl: an origin. */
export function checkRedditBaseUrl(raw: string): string {
  if (typeof raw !== 'string' || !/^https?:\/\/[^/?#]+\/?$/i.test(raw)) throw new Error(`must be an http(s) origin such as https://www.reddit.com, got ${JSON.stringify(raw)}`);
  return raw;
}

/** REDDIT_USER_AGENT / TrendsModule's redditUserAgent. */
export function checkRedditUserAgent(raw: string): string {
  if (typeof raw !== 'string' || !/^[\x20-\x7e]{1,256}$/.test(raw)) throw new Error('must be 1 to 256 printable ASCII characters, such as "linux:com.example.trends:1.0 (by /u/yourname)"');
  return raw;
}

/** TRACKED_SUBREDDITS / TrendsModule's trackedSubreddits: polled by name and stored in varchar(21) columns. */
export function checkSubredditNames(names: readonly string[]): readonly string[] {
  const bad = names.find((s) => typeof s !== 'string' || !SUBREDDIT_INPUT.test(s));
  if (bad !== undefined) throw new Error(`${JSON.stringify(bad)} is not a subreddit name`);
  return names;
}

/** A plan's requests per minute: PLAN_RATE_LIMITS' figures, AuthModule's `plans`. */
export function isRequestsPerMinute(n: unknown): boolean {
  return typeof n === 'number' && Number.isInteger(n) && n >= 1;
}
