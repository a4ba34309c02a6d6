import * as path from 'node:path';
import { isIP } from 'node:net';
import { DEFAULT_PLAN_LIMITS, Plan, PLANS, PlanLimits } from '../auth/plans';
import { DEFAULT_HTTP_LIMITS, HttpLimits } from '../common/http-limits';
import { LOG_LEVELS, LogLevelName } from '../common/logging';
import { DEFAULT_DELIVERY_LEASE_MS } from '../delivery/delivery.options';
import { parseRetrySchedule } from '../delivery/retry-policy';
import { readReceiverCa } from '../delivery/transport/receiver-ca';
import { DEFAULT_DISABLE_AFTER_MS } from '../delivery/lifecycle/disable-rule';
import { decodeWebhookSecret } from '../delivery/secret';
import { EncryptionKey, parseEncryptionKeys } from '../crypto/key-ring';
import type { HostSchema } from '../database/data-source';
import { onDatabase, type DatabaseConfig } from '../database/dialect';
import { parseFeatures } from '../database/features';
import { parseCursorSecrets } from '../pagination/cursor-codec';
import { parseCidrList } from '../ssrf/cidr';
import { parseDnsServers } from '../ssrf/resolver';
import { parseAllowDestinations } from '../ssrf/destinations';
import { checkFrameAncestor, checkPortalBaseUrl, checkRedditBaseUrl, checkRedditUserAgent, checkSubredditNames, INT_SETTINGS, IntSetting, isRequestsPerMinute, namedMessage } from './settings';

/**
 * The whole environment schema, read once at boot (main.ts / cli.ts) and handed to modules as
 * typed options. Nothing else in the code base reads process.env, but for one default of the
 * modules in a host app: DeliveryModule reads DELIVERY_CA_FILE when given no `ca` (receiverCaOf).
 */
export interface AppConfig {
  database: DatabaseConfig;
  /**
   * A host's database (TRENDHOOKS_MIGRATIONS_TABLE, TRENDHOOKS_FEATURES; the CLI's
   * `--migrations-table`, `--features`): the per-feature migrations, recorded in the host's own
   * migrations table. null: the standalone's series in `trendhooks_migrations`.
   */
  hostSchema: HostSchema | null;
  /**
   * `adapter`: the HTTP server under Nest (HTTP_ADAPTER); both answer identically. `limits`: the
   * slow-client deadlines and the connection cap of the listener (HTTP_*_TIMEOUT_MS, HTTP_MAX_CONNECTIONS).
   */
  http: { port: number; host: string; adapter: HttpAdapterName; limits: HttpLimits; trustProxy: TrustProxy };
  /** The Prometheus listener, apart from the API (METRICS_PORT/METRICS_HOST); port null: none. */
  metrics: { port: number | null; host: string };
  /** PORTAL_BASE_URL (links' origin; else the request's), PORTAL_LINK_TTL_SECONDS, PORTAL_SESSION_TTL_SECONDS, PORTAL_FRAME_ANCESTORS (space- or comma-separated origins), PORTAL_EXCHANGES_PER_MINUTE (link exchanges per client address, default 30). */
  portal: { baseUrl: string | null; linkTtlSeconds: number; sessionTtlSeconds: number; frameAncestors: string[]; exchangesPerMinute: number };
  plans: Record<Plan, PlanLimits>;
  redisUrl: string | null;
  cursor: { secrets: string[]; ttlSeconds: number };
  /**
   * Encryption at rest (README "Secrets at rest"): `keys` from ENCRYPTION_KEYS, else the key file
   * ENCRYPTION_KEY_FILE; `keyFile` null means the default beside the database (encryptionKeyFile()).
   */
  encryption: { keys: EncryptionKey[]; keyFile: string | null };
  ssrf: {
    allowCidrs: string;
    /** Exact IP:port receivers let through the block list (SSRF_ALLOW_DESTINATIONS). */
    allowDestinations: string;
    denyCidrs: string;
    dnsTimeoutMs: number;
    /** Nameservers of the SSRF resolver; null: the system's (resolv.conf). */
    dnsServers: string[] | null;
    dnsCacheTtlMs: number;
    dnsNegativeTtlMs: number;
    dnsCacheMaxEntries: number;
    dnsMaxConcurrentPerCustomer: number;
  };
  delivery: {
    caFile: string | null;
    /** The PEM of caFile, read at boot so a wrong path stops the process at once. */
    caPem: string | null;
    timeoutMs: number;
    leaseMs: number;
    concurrency: number;
    /** Attempts of one customer waiting for DNS at once per worker; null: an eighth of the concurrency. */
    dnsLookupsPerCustomer: number | null;
    batchSize: number;
    pollIntervalMs: number;
    /** Seconds between attempts; null = the default schedule. */
    retrySchedule: number[] | null;
    /** The circuit breaker per customer and destination (DELIVERY_CIRCUIT_*). */
    circuit: { failures: number; throttle: number; pauseMs: number; maxPauseMs: number };
    /** WEBHOOK_DISABLE_AFTER: how long a webhook's attempts must all fail before it is disabled; null: never (only 410 disables). */
    disableAfterMs: number | null;
  };
  /** OPERATIONS_WEBHOOK_URL and OPERATIONS_WEBHOOK_SECRET: where `webhook.disabled` notifications go, signed; null: nowhere. */
  operations: { webhookUrl: string; webhookSecret: string } | null;
  trends: {
    /** REDDIT_POLLING=off: no process of this configuration polls Reddit, whatever its role. */
    polling: boolean;
    trackedSubreddits: string[];
    redditBaseUrl: string;
    redditClientId: string | null;
    redditClientSecret: string | null;
    /** More OAuth clients from REDDIT_CLIENTS (`id:secret,id:secret`), sharing the polling load. */
    redditClients: { id: string; secret: string }[];
    /** Sent on every Reddit call; null: trendhooks' own (Reddit throttles generic agents). */
    redditUserAgent: string | null;
    pollIntervalMs: number;
    /** Subreddits polled in parallel by one process (one rate-limit budget for all of them). */
    pollConcurrency: number;
    /** Total time of one Reddit request. */
    redditTimeoutMs: number;
    /** Posts created longer ago are deleted (by the poller) and not stored. */
    postsRetentionDays: number;
  };
  ops: {
    /** JSON log threshold (LOG_LEVEL). */
    logLevel: LogLevelName;
    /** The most a SIGTERMed process spends draining HTTP requests and delivery attempts before it exits anyway. */
    shutdownTimeoutMs: number;
  };
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string): string | null {
  const v = env[name];
  return v === undefined || v.trim() === '' ? null : v.trim();
}

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === null) return def;
  if (/^-\d+$/.test(raw)) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${raw}`);
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** A setting of INT_SETTINGS (the range a host's module option shares). */
function setting(env: Env, s: IntSetting, def: number): number {
  return int(env, s.env, def, s.min, s.max);
}

/** A setting's shared check (settings.ts) on the raw value, its error naming the variable. */
function checked<T>(name: string, value: T, check: (v: T) => unknown): T {
  try {
    check(value);
  } catch (err) {
    throw new ConfigError(namedMessage(name, (err as Error).message));
  }
  return value;
}

export type HttpAdapterName = 'express' | 'fastify';
/**
 * TRUST_PROXY: which peers may name the client in `X-Forwarded-For` (the address the unauthenticated
 * and portal-exchange limits count per). null (unset, the default): none, every request is its TCP
 * peer's. A number: that many proxies in front. Else addresses, CIDRs or `loopback`, `linklocal`,
 * `uniquelocal`. Never "any peer": a client could then pick the address it is counted under.
 */
export type TrustProxy = number | string[] | null;

const TRUST_PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

export function parseTrustProxy(raw: string | null): TrustProxy {
  if (raw === null || raw === '' || raw === 'false') return null;
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops < 1 || hops > 10) throw new ConfigError(`TRUST_PROXY as a count of proxies must be 1 to 10, got ${raw}`);
    return hops;
  }
  const list = raw.split(/[\s,]+/).filter(Boolean);
  for (const entry of list) {
    if (TRUST_PROXY_NAMES.includes(entry)) continue;
    const [addr, bits, extra] = entry.split('/');
    const v = isIP(addr);
    if (v === 0 || extra !== undefined || (bits !== undefined && (!/^\d+$/.test(bits) || Number(bits) > (v === 4 ? 32 : 128)))) {
      throw new ConfigError(`TRUST_PROXY: ${JSON.stringify(entry)} is not an address, a CIDR, loopback, linklocal or uniquelocal (nor is "true" accepted: name the proxies)`);
    }
  }
  return list;
}

export const HTTP_ADAPTERS: readonly HttpAdapterName[] = ['express', 'fastify'];

function httpAdapter(raw: string | null): HttpAdapterName {
  if (raw === null) return 'express';
  const name = raw.toLowerCase();
  if (!(HTTP_ADAPTERS as readonly string[]).includes(name)) throw new ConfigError(`HTTP_ADAPTER must be express or fastify, got "${raw}"`);
  return name as HttpAdapterName;
}

export function parseDatabaseUrl(raw: string | null, cwd: string): DatabaseConfig {
  if (raw === null) return { type: 'sqlite', path: path.resolve(cwd, 'data/trendhooks.db') };
  if (/^postgres(ql)?:\/\//i.test(raw)) return { type: 'postgres', url: raw };
  const m = /^sqlite:(.+)$/i.exec(raw);
  if (m) {
    const file = m[1].replace(/^\/\/(?=\/)/, ''); // accept sqlite:///abs/path as well as sqlite:/abs/path
    return { type: 'sqlite', path: file === ':memory:' ? file : path.resolve(cwd, file) };
  }
  throw new ConfigError('DATABASE_URL must start with postgres:// or sqlite:');
}

/**
 * The key file used without ENCRYPTION_KEYS: ENCRYPTION_KEY_FILE, else `trendhooks.key` beside the
 * SQLite file (a separate file, so a copy of the database alone holds only ciphertext), else
 * `./data/trendhooks.key` on PostgreSQL, shared by the processes of one machine (README: several
 * machines set ENCRYPTION_KEYS). null: an in-memory SQLite database, whose key need not outlive it.
 */
/** TRENDHOOKS_MIGRATIONS_TABLE and TRENDHOOKS_FEATURES: a host's database, or null (the standalone's own). */
export function parseHostSchema(table: string | null, features: string | null): HostSchema | null {
  if (table === null) {
    if (features !== null) throw new ConfigError('TRENDHOOKS_FEATURES (--features) picks migrations for a host database: set TRENDHOOKS_MIGRATIONS_TABLE (--migrations-table) too');
    return null;
  }
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(table)) throw new ConfigError(`TRENDHOOKS_MIGRATIONS_TABLE must be a table name (letters, digits, _), got "${table}"`);
  if (table === 'trendhooks_migrations') {
    throw new ConfigError('TRENDHOOKS_MIGRATIONS_TABLE names a host\'s own migrations table; trendhooks_migrations is the standalone\'s (leave the variable unset for it)');
  }
  try {
    return { migrationsTable: table, features: features === null ? { apiKeys: true, settings: true, posts: true } : parseFeatures(features) };
  } catch (err) {
    throw new ConfigError(`TRENDHOOKS_FEATURES: ${(err as Error).message}`);
  }
}

export function encryptionKeyFile(config: Pick<AppConfig, 'database' | 'encryption'>, cwd = process.cwd()): string | null {
  if (config.encryption.keyFile !== null) return config.encryption.keyFile;
  return onDatabase<string | null>(config.database, {
    // Beside the SQLite file; an in-memory database keeps nothing, nor may its key.
    sqlite: (db) => (db.path === ':memory:' ? null : path.join(path.dirname(db.path), 'trendhooks.key')),
    postgres: () => path.resolve(cwd, 'data/trendhooks.key'),
  });
}

/** Where the configured database is, for messages: the SQLite file, or PostgreSQL's host, port and database (never the password). */
export function describeDatabase(config: Pick<AppConfig, 'database'>): string {
  return onDatabase(config.database, {
    sqlite: (db) => `SQLite ${db.path}`,
    postgres: (db) => {
      try {
        const url = new URL(db.url);
        return `PostgreSQL ${url.hostname}:${url.port || 5432}${url.pathname}`;
      } catch {
        return 'PostgreSQL';
      }
    },
  });
}

/** `free=60,pro=300` → overrides of the per-minute figures. */
export function parsePlanRateLimits(raw: string | null): Partial<Record<Plan, number>> {
  const out: Partial<Record<Plan, number>> = {};
  if (raw === null) return out;
  for (const part of raw.split(',')) {
    const m = /^\s*([a-z]+)\s*=\s*(\d+)\s*$/.exec(part);
    if (!m || !(PLANS as readonly string[]).includes(m[1]) || !isRequestsPerMinute(Number(m[2]))) {
      throw new ConfigError(`PLAN_RATE_LIMITS: bad entry "${part.trim()}" (expected plan=requests_per_minute)`);
    }
    out[m[1] as Plan] = Number(m[2]);
  }
  return out;
}

/**
 * `REDDIT_CLIENTS=id:secret,id:secret`: OAuth clients that share the polling load. A malformed
 * entry or an id given twice stops the start, naming the entry (never the secret).
 */
export function parseRedditClients(raw: string | null, primaryId: string | null): { id: string; secret: string }[] {
  if (raw === null) return [];
  const out: { id: string; secret: string }[] = [];
  const entries = raw.split(',').map((e) => e.trim());
  entries.forEach((entry, i) => {
    const colon = entry.indexOf(':');
    const id = colon < 0 ? entry : entry.slice(0, colon);
    const secret = colon < 0 ? '' : entry.slice(colon + 1);
    const what = `REDDIT_CLIENTS entry ${i + 1}${id && /^[\x21-\x7e]{1,64}$/.test(id) ? ` ("${id}")` : ''}`;
    if (entry === '') throw new ConfigError(`${what} is empty: list id:secret pairs separated by commas`);
    if (colon < 0 || secret === '') throw new ConfigError(`${what} must be client_id:client_secret`);
    if (!/^[\x21-\x7e]{1,64}$/.test(id) || id.includes(':')) throw new ConfigError(`${what}: the client id must be 1 to 64 printable ASCII characters without spaces`);
    if (!/^[\x21-\x7e]{1,256}$/.test(secret)) throw new ConfigError(`${what}: the client secret must be 1 to 256 printable ASCII characters without spaces or commas`);
    if (id === primaryId || out.some((c) => c.id === id)) throw new ConfigError(`${what}: client id "${id}" is listed twice (REDDIT_CLIENT_ID and REDDIT_CLIENTS together list each client once)`);
    out.push({ id, secret });
  });
  return out;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration setting: whole milliseconds (as the *_MS settings take them), or a number with a unit,
 * `ms`, `s`, `m`, `h` or `d` (`5d`, `36h`, `1.5h`); `0` or `off`: null (never).
 */
export function parseDuration(raw: string, min: number, max: number): number | null {
  const s = raw.trim().toLowerCase();
  if (s === 'off' || s === '0') return null;
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(s);
  if (!m || (m[2] === undefined && m[1].includes('.'))) throw new Error(`must be a duration such as 5d, 36h, 90m or whole milliseconds, or off; got "${raw}"`);
  const ms = Math.round(Number(m[1]) * DURATION_UNITS[m[2] ?? 'ms']);
  if (ms < min || ms > max) throw new Error(`must be between ${min} ms and ${max / 86_400_000} days (or off), got ${raw}`);
  return ms;
}

export function loadConfig(env: Env, cwd = process.cwd()): AppConfig {
  const overrides = parsePlanRateLimits(str(env, 'PLAN_RATE_LIMITS'));
  const plans = {} as Record<Plan, PlanLimits>;
  for (const p of PLANS) {
    plans[p] = { ...DEFAULT_PLAN_LIMITS[p], requestsPerMinute: overrides[p] ?? DEFAULT_PLAN_LIMITS[p].requestsPerMinute };
  }
  const tracked = (str(env, 'TRACKED_SUBREDDITS') ?? '')
    .split(',')
    .map((s) => s.trim().replace(/^\/?r\//i, '').toLowerCase())
    .filter(Boolean);
  const d = DEFAULT_HTTP_LIMITS;
  const limits: HttpLimits = {
    headersTimeoutMs: int(env, 'HTTP_HEADERS_TIMEOUT_MS', d.headersTimeoutMs, 100, 600_000),
    requestTimeoutMs: int(env, 'HTTP_REQUEST_TIMEOUT_MS', d.requestTimeoutMs, 100, 3_600_000),
    keepAliveTimeoutMs: int(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', d.keepAliveTimeoutMs, 100, 600_000),
    maxConnections: int(env, 'HTTP_MAX_CONNECTIONS', d.maxConnections, 1, 1_000_000),
  };
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigError(`HTTP_HEADERS_TIMEOUT_MS (${limits.headersTimeoutMs}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${limits.requestTimeoutMs}): the headers are part of the request`);
  }
  const http = { port: int(env, 'PORT', 8080, 0, 65535), host: str(env, 'HOST') ?? '127.0.0.1', adapter: httpAdapter(str(env, 'HTTP_ADAPTER')), limits, trustProxy: parseTrustProxy(str(env, 'TRUST_PROXY')) };
  const metrics = { port: str(env, 'METRICS_PORT') === null ? null : int(env, 'METRICS_PORT', 0, 0, 65535), host: str(env, 'METRICS_HOST') ?? '127.0.0.1' };
  if (metrics.port !== null && metrics.port !== 0 && metrics.port === http.port) {
    throw new ConfigError(`METRICS_PORT (${metrics.port}) must differ from PORT: metrics are never served on the API listener`);
  }
  if (str(env, 'METRICS_HOST') !== null && metrics.port === null) throw new ConfigError('METRICS_HOST is set but METRICS_PORT is not: set METRICS_PORT to serve metrics');
  // Polled by name and stored in varchar(21) columns: a typo must stop the start, not every poll.
  checked('TRACKED_SUBREDDITS', tracked, checkSubredditNames);
  const redisUrl = str(env, 'REDIS_URL');
  // Parsers of other modules validate their own formats; their errors are reported as config errors.
  const parsed = <T>(name: string, parse: (raw: string) => T): T | null => {
    const raw = str(env, name);
    if (raw === null) return null;
    try {
      return parse(raw);
    } catch (err) {
      const message = (err as Error).message;
      throw new ConfigError(message.startsWith(name) ? message : `${name}: ${message}`);
    }
  };
  parsed('SSRF_ALLOW_CIDRS', parseCidrList);
  parsed('SSRF_DENY_CIDRS', parseCidrList);
  parsed('SSRF_ALLOW_DESTINATIONS', parseAllowDestinations);
  const cursorSecrets = parsed('CURSOR_SECRET', parseCursorSecrets) ?? [];
  const encryptionKeys = parsed('ENCRYPTION_KEYS', parseEncryptionKeys) ?? [];
  const keyFileRaw = str(env, 'ENCRYPTION_KEY_FILE');
  if (encryptionKeys.length > 0 && keyFileRaw !== null) throw new ConfigError('ENCRYPTION_KEYS and ENCRYPTION_KEY_FILE exclude each other: set one');
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) throw new ConfigError('REDIS_URL must start with redis:// or rediss://');
  const timeoutMs = setting(env, INT_SETTINGS.deliveryTimeoutMs, 10_000);
  // Independent of the attempt timeout: a live worker renews its leases every third of it while
  // its attempts last; it bounds how long a dead worker's deliveries wait (see src/delivery/README.md).
  const leaseMs = setting(env, INT_SETTINGS.deliveryLeaseMs, DEFAULT_DELIVERY_LEASE_MS);
  const circuitPause = setting(env, INT_SETTINGS.deliveryCircuitPauseMs, 30_000);
  const circuitMaxPause = setting(env, INT_SETTINGS.deliveryCircuitMaxPauseMs, Math.max(600_000, circuitPause));
  if (circuitMaxPause < circuitPause) throw new ConfigError(`DELIVERY_CIRCUIT_MAX_PAUSE_MS (${circuitMaxPause}) must be at least DELIVERY_CIRCUIT_PAUSE_MS (${circuitPause})`);
  const concurrency = setting(env, INT_SETTINGS.deliveryConcurrency, 64);
  const dnsLookupsPerCustomer = str(env, 'DELIVERY_DNS_LOOKUPS_PER_CUSTOMER') === null ? null : int(env, 'DELIVERY_DNS_LOOKUPS_PER_CUSTOMER', 0, 1, concurrency);
  const logLevel = (str(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  // The worker gives attempts in flight the attempt timeout + 1 s; the bound must leave room for that.
  const shutdownTimeoutMs = int(env, 'SHUTDOWN_TIMEOUT_MS', Math.max(30_000, timeoutMs + 5000), 1000, 600_000);
  if (shutdownTimeoutMs <= timeoutMs + 1000) {
    throw new ConfigError(`SHUTDOWN_TIMEOUT_MS (${shutdownTimeoutMs}) must exceed DELIVERY_TIMEOUT_MS (${timeoutMs}) + 1000, so attempts in flight can finish`);
  }
  const portalBase = str(env, 'PORTAL_BASE_URL');
  if (portalBase !== null) checked('PORTAL_BASE_URL', portalBase, checkPortalBaseUrl);
  const frameAncestors = (str(env, 'PORTAL_FRAME_ANCESTORS') ?? '').split(/[\s,]+/).filter(Boolean);
  for (const a of frameAncestors) checked('PORTAL_FRAME_ANCESTORS', a, checkFrameAncestor);
  const portal = {
    baseUrl: portalBase,
    linkTtlSeconds: setting(env, INT_SETTINGS.portalLinkTtlSeconds, 3600),
    sessionTtlSeconds: setting(env, INT_SETTINGS.portalSessionTtlSeconds, 3600),
    frameAncestors,
    exchangesPerMinute: setting(env, INT_SETTINGS.portalExchangesPerMinute, 30),
  };
  const operationsUrl = str(env, 'OPERATIONS_WEBHOOK_URL');
  const operationsSecret = str(env, 'OPERATIONS_WEBHOOK_SECRET');
  if ((operationsUrl === null) !== (operationsSecret === null)) throw new ConfigError('OPERATIONS_WEBHOOK_URL and OPERATIONS_WEBHOOK_SECRET go together: set both or neither');
  if (operationsUrl !== null) {
    let url: URL | null = null;
    try {
      url = new URL(operationsUrl);
    } catch {
      // refused below
    }
    if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new ConfigError(`OPERATIONS_WEBHOOK_URL must be an absolute http(s) URL, got "${operationsUrl}"`);
    parsed('OPERATIONS_WEBHOOK_SECRET', decodeWebhookSecret);
  }
  const redditPolling = (str(env, 'REDDIT_POLLING') ?? 'on').toLowerCase();
  if (redditPolling !== 'on' && redditPolling !== 'off') throw new ConfigError(`REDDIT_POLLING must be "on" or "off", got "${str(env, 'REDDIT_POLLING')}"`);
  const redditBaseUrl = str(env, 'REDDIT_BASE_URL') ?? 'https://www.reddit.com';
  checked('REDDIT_BASE_URL', redditBaseUrl, checkRedditBaseUrl);
  const redditClientId = str(env, 'REDDIT_CLIENT_ID');
  const redditClientSecret = str(env, 'REDDIT_CLIENT_SECRET');
  if ((redditClientId === null) !== (redditClientSecret === null)) throw new ConfigError('REDDIT_CLIENT_ID and REDDIT_CLIENT_SECRET go together: set both or neither');
  const redditClients = parseRedditClients(str(env, 'REDDIT_CLIENTS'), redditClientId);
  const redditUserAgent = str(env, 'REDDIT_USER_AGENT');
  if (redditUserAgent !== null) checked('REDDIT_USER_AGENT', redditUserAgent, checkRedditUserAgent);
  return {
    database: parseDatabaseUrl(str(env, 'DATABASE_URL'), cwd),
    hostSchema: parseHostSchema(str(env, 'TRENDHOOKS_MIGRATIONS_TABLE'), str(env, 'TRENDHOOKS_FEATURES')),
    http,
    metrics,
    portal,
    plans,
    redisUrl,
    cursor: {
      secrets: cursorSecrets,
      ttlSeconds: setting(env, INT_SETTINGS.cursorTtlSeconds, 86_400),
    },
    encryption: { keys: encryptionKeys, keyFile: keyFileRaw === null ? null : path.resolve(cwd, keyFileRaw) },
    ssrf: {
      allowCidrs: str(env, 'SSRF_ALLOW_CIDRS') ?? '',
      allowDestinations: str(env, 'SSRF_ALLOW_DESTINATIONS') ?? '',
      denyCidrs: str(env, 'SSRF_DENY_CIDRS') ?? '',
      dnsTimeoutMs: setting(env, INT_SETTINGS.ssrfDnsTimeoutMs, 5000),
      dnsServers: parsed('SSRF_DNS_SERVERS', (raw) => {
        const servers = parseDnsServers(raw.split(/[\s,]+/).filter(Boolean));
        if (servers.length === 0) throw new Error('list at least one nameserver');
        return servers;
      }),
      dnsCacheTtlMs: setting(env, INT_SETTINGS.ssrfDnsCacheTtlMs, 60_000),
      dnsNegativeTtlMs: setting(env, INT_SETTINGS.ssrfDnsNegativeTtlMs, 5000),
      dnsCacheMaxEntries: setting(env, INT_SETTINGS.ssrfDnsCacheMaxEntries, 10_000),
      dnsMaxConcurrentPerCustomer: setting(env, INT_SETTINGS.ssrfDnsMaxConcurrentPerCustomer, 8),
    },
    delivery: {
      caFile: str(env, 'DELIVERY_CA_FILE'),
      caPem: parsed('DELIVERY_CA_FILE', (file) => readReceiverCa(file, cwd)),
      timeoutMs,
      leaseMs,
      concurrency,
      dnsLookupsPerCustomer,
      batchSize: setting(env, INT_SETTINGS.deliveryBatchSize, 64),
      pollIntervalMs: setting(env, INT_SETTINGS.deliveryPollIntervalMs, 1000),
      retrySchedule: parsed('DELIVERY_RETRY_SCHEDULE', parseRetrySchedule),
      // The circuit breaker per customer and destination (src/delivery/README.md); failures 0 switches it off.
      circuit: {
        failures: setting(env, INT_SETTINGS.deliveryCircuitFailures, 5),
        throttle: setting(env, INT_SETTINGS.deliveryCircuitThrottle, 2),
        pauseMs: circuitPause,
        maxPauseMs: circuitMaxPause,
      },
      disableAfterMs: str(env, 'WEBHOOK_DISABLE_AFTER') === null ? DEFAULT_DISABLE_AFTER_MS : parsed('WEBHOOK_DISABLE_AFTER', (raw) => parseDuration(raw, INT_SETTINGS.webhookDisableAfterMs.min, INT_SETTINGS.webhookDisableAfterMs.max)),
    },
    operations: operationsUrl !== null && operationsSecret !== null ? { webhookUrl: operationsUrl, webhookSecret: operationsSecret } : null,
    trends: {
      polling: redditPolling === 'on',
      trackedSubreddits: tracked,
      redditBaseUrl: redditBaseUrl.replace(/\/$/, ''),
      redditClientId,
      redditClientSecret,
      redditClients,
      redditUserAgent,
      pollIntervalMs: setting(env, INT_SETTINGS.redditPollIntervalMs, 60_000),
      pollConcurrency: setting(env, INT_SETTINGS.redditPollConcurrency, 4),
      redditTimeoutMs: setting(env, INT_SETTINGS.redditTimeoutMs, 10_000),
      postsRetentionDays: setting(env, INT_SETTINGS.postsRetentionDays, 30),
    },
    ops: { logLevel: logLevel as LogLevelName, shutdownTimeoutMs },
  };
}
