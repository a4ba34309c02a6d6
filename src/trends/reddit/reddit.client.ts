import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, OnApplicationShutdown, Optional } from '@nestjs/common';
import { Agent, Dispatcher, request } from 'undici';
import { parseRetryAfter } from '../../common/retry-after';
import { parseJsonDocument, RedditPost } from '../../posts/reddit-parse';
import { TRENDS_OPTIONS, TrendsModuleOptions } from '../trends.options';
import { backoffDelay, RateLimiter, RedditRuntime } from './rate-limit';
import { DEFAULT_REDDIT_BASE_URL, REDDIT_OAUTH_API_URL, resolvePollerOptions, ResolvedPollerOptions } from './tuning';

/** Optional provider of the client's clock, sleep and jitter (tests); the real ones otherwise. */
export const REDDIT_RUNTIME = Symbol('trendhooks:reddit-runtime');

export const SYSTEM_RUNTIME: RedditRuntime = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleep(Math.max(0, ms), undefined, { signal }),
  random: Math.random,
};

/** Reddit allows up to 100 fullnames per /by_id call. */
export const BY_ID_BATCH = 100;

/**
 * Reddit asks for `<platform>:<app id>:<version> (by /u/<user>)` and forbids a misleading one; generic
 * agents get throttled hard. The default names the software only, no account: the account is the
 * operator's, in their own REDDIT_USER_AGENT (README "What trendhooks fetches from Reddit").
 */
export const USER_AGENT = `node:trendhooks:${packageVersion()} (+https://github.com/trendhooks/trendhooks; set REDDIT_USER_AGENT to your own)`;

function packageVersion(): string {
  // src/trends/reddit and dist/trends/reddit are both three levels below the package root.
  try {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'trendhooks' && typeof pkg.version === 'string') return pkg.version;
  } catch {
    /* packaged without package.json: fall through */
  }
  return '0.0.0';
}

/** A request that failed for good (after retries, or not retryable). `errorClass` is short and stable, for `trend_sources.last_error` and logs. */
export class RedditRequestError extends Error {
  constructor(
    readonly errorClass: string,
    message: string,
  ) {
    super(message);
    this.name = 'RedditRequestError';
  }
}

export type ListingResult =
  /** `after`: the fullname to page on with (null at the end of the listing). */
  | { kind: 'ok'; posts: RedditPost[]; skipped: number; after: string | null }
  /**
   * Reddit redirects unknown subreddits (to search) and answers 403 (private, quarantined) or 404
   * (banned); `reason` is the body's `reason` (`private`, `banned`, `quarantined`, …), lower case, when it gave one.
   */
  | { kind: 'unavailable'; status: number; detail: string; reason: string | null };

export interface CallOptions {
  /** Aborts waits and requests at once (shutdown). */
  signal?: AbortSignal;
  /** Runs right before each request leaves, after any rate-limit wait (the poller renews its lease here). */
  beforeRequest?: () => Promise<void>;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Read for 2xx (and, briefly, for 403/404); null otherwise. */
  text: string | null;
}

/**
 * Reads Reddit: `/r/{sub}/new.json` and `/by_id/{names}.json`. App-only OAuth when a client id
 * and secret are configured (token fetched once, refreshed before expiry), the public endpoints
 * otherwise. One limiter per client follows Reddit's rate-limit headers across all subreddits;
 * 429, 5xx, timeouts and network errors are retried with exponential backoff and jitter
 * (Retry-After honoured). Redirects are never followed.
 */
@Injectable()
export class RedditClient implements OnApplicationShutdown {
  private readonly logger = new Logger('RedditClient');
  private readonly opts: ResolvedPollerOptions;
  private readonly rt: RedditRuntime;
  private readonly limiter: RateLimiter;
  private readonly dispatcher: Dispatcher;
  /** Where API calls go (oauth.reddit.com under OAuth against Reddit itself; otherwise the base). */
  readonly apiBase: string;
  private token?: { value: string; refreshAt: number };
  private tokenFlight?: Promise<string>;
  /** Token requests made (tests and metrics). */
  tokenRequests = 0;

  constructor(
    @Inject(TRENDS_OPTIONS) private readonly options: TrendsModuleOptions,
    @Optional() @Inject(REDDIT_RUNTIME) runtime?: RedditRuntime,
  ) {
    this.opts = resolvePollerOptions(options);
    this.rt = runtime ?? SYSTEM_RUNTIME;
    this.limiter = new RateLimiter(this.rt, { perMinute: this.opts.quotaPerMinute, backoffBaseMs: this.opts.backoffBaseMs, backoffMaxMs: this.opts.backoffMaxMs });
    this.dispatcher = new Agent({ connections: 16, keepAliveTimeout: 30_000, headersTimeout: this.opts.timeoutMs, bodyTimeout: this.opts.timeoutMs });
    // A configured base is used for everything (a local fake in tests); Reddit itself serves OAuth calls from another host.
    this.apiBase = this.oauth && isRedditItself(this.opts.baseUrl) ? REDDIT_OAUTH_API_URL : this.opts.baseUrl;
  }

  private get userAgent(): string {
    return this.opts.userAgent ?? USER_AGENT;
  }

  get oauth(): boolean {
    return this.opts.clientId !== null && this.opts.clientSecret !== null;
  }

  /** Another client of the same settings under other OAuth credentials: its own token and its own rate-limit budget. */
  withCredentials(clientId: string, clientSecret: string): RedditClient {
    return new RedditClient({ ...this.options, redditClientId: clientId, redditClientSecret: clientSecret }, this.rt);
  }

  /** The newest posts of a subreddit (one page of 100). */
  fetchNew(subreddit: string, call: CallOptions = {}): Promise<ListingResult> {
    return this.fetchListing([subreddit], null, call);
  }

  /**
   * One page (100) of the newest posts of one subreddit, or of several as a multireddit
   * (`/r/a+b+c/new.json`), older than the fullname `after` when given.
   */
  async fetchListing(subreddits: readonly string[], after: string | null, call: CallOptions = {}): Promise<ListingResult> {
    const name = subreddits.map((s) => encodeURIComponent(s)).join('+');
    const res = await this.get(`/r/${name}/new.json?limit=100&raw_json=1${after ? `&after=${encodeURIComponent(after)}` : ''}`, call, true, after !== null);
    if (res.status >= 200 && res.status < 300) return this.parseListing(res, `r/${name}`);
    if (!(res.status >= 300 && res.status < 400) && res.status !== 403 && res.status !== 404) {
      throw new RedditRequestError(`http_${res.status}`, `GET /r/${name}/new.json answered ${res.status}`);
    }
    const location = first(res.headers.location);
    const reason = location ? null : reasonOf(res.text);
    const detail = location ? `HTTP ${res.status} to ${location}` : `HTTP ${res.status}${reason ? ` (${reason})` : ''}`;
    return { kind: 'unavailable', status: res.status, detail, reason };
  }

  /** Current state of posts by id (without `t3_`), 100 per request; deleted or unknown ids are simply absent. */
  async fetchByIds(ids: readonly string[], call: CallOptions = {}): Promise<RedditPost[]> {
    const out: RedditPost[] = [];
    for (let i = 0; i < ids.length; i += BY_ID_BATCH) {
      const names = ids.slice(i, i + BY_ID_BATCH).map((id) => `t3_${id}`);
      const res = await this.get(`/by_id/${names.join(',')}.json?raw_json=1`, call, false);
      if (res.status < 200 || res.status >= 300) throw new RedditRequestError(`http_${res.status}`, `GET /by_id answered ${res.status}`);
      const parsed = this.parseListing(res, 'by_id');
      if (parsed.kind === 'ok') out.push(...parsed.posts);
    }
    return out;
  }

  /** After the poller stopped (it stops in beforeApplicationShutdown), so no poll meets a closed agent. */
  async onApplicationShutdown(): Promise<void> {
    await this.dispatcher.destroy().catch(() => undefined);
  }

  private parseListing(res: Answer, what: string): ListingResult {
    // get() only returns 2xx with a body that parsed as JSON.
    const json = JSON.parse(res.text ?? 'null') as unknown;
    const doc = parseJsonDocument(json);
    if (doc.issues.length > 0) this.logger.debug(`${what}: ${doc.issues.length} records skipped (${doc.issues[0].reason})`);
    const after = (json as { data?: { after?: unknown } } | null)?.data?.after;
    return { kind: 'ok', posts: doc.records.map((r) => r.post), skipped: doc.issues.length, after: typeof after === 'string' && after !== '' ? after : null };
  }

  /**
   * One GET with the retry rules. Answers any final status (2xx with a JSON body; 3xx, 4xx as they
   * are); throws RedditRequestError when retries run out or the caller aborts. `urgent`: the next
   * page of a listing, which the limiter lets start before other requests.
   */
  private async get(pathAndQuery: string, call: CallOptions, readErrorReason: boolean, urgent = false): Promise<Answer> {
    const url = `${this.apiBase}${pathAndQuery}`;
    let reauthorised = false;
    let lastClass = 'unknown';
    let lastMessage = '';
    for (let retry = 0; ; retry++) {
      if (retry > this.opts.maxRetries) throw new RedditRequestError(lastClass, `GET ${pathAndQuery}: ${lastMessage} (after ${retry} attempts)`);
      // Every attempt, a retry included, goes through the limiter: a failure's backoff is the whole client's.
      const ticket = await this.limiter.acquire(call.signal, urgent);
      let res: Answer;
      try {
        await call.beforeRequest?.();
        const headers: Record<string, string> = { 'user-agent': this.userAgent, accept: 'application/json' };
        if (this.oauth) headers.authorization = `bearer ${await this.bearer(call.signal)}`;
        res = await this.send('GET', url, headers, null, call.signal, (status) => (status >= 200 && status < 300) || (readErrorReason && (status === 403 || status === 404)));
      } catch (err) {
        if (call.signal?.aborted || !isTransient(err)) {
          this.limiter.abandoned(ticket);
          throw err;
        }
        lastClass = errorClassOf(err);
        lastMessage = describe(err);
        this.limiter.failed(ticket, this.rt.random);
        continue;
      }
      const now = this.rt.now();
      this.limiter.update(res.headers, now, this.opts.maxRetryAfterMs);
      if (res.status >= 500 || res.status === 408 || (res.status >= 200 && res.status < 300 && !isJson(res.text))) {
        // Reddit serves an HTML error page with 200 during some outages: transient too.
        lastClass = res.status >= 300 ? `http_${res.status}` : 'bad_json';
        lastMessage = res.status >= 300 ? `answered ${res.status}` : 'answered 200 with a body that is not JSON';
        this.limiter.failed(ticket, this.rt.random);
        const retryAfter = parseRetryAfter(res.headers['retry-after'], new Date(now));
        if (retryAfter !== null) this.limiter.block(now + Math.min(retryAfter, this.opts.maxRetryAfterMs));
        continue;
      }
      this.limiter.succeeded(ticket);
      if (res.status === 429) {
        // Over the budget: every request of this client waits, not just this one.
        const wait = parseRetryAfter(res.headers['retry-after'], new Date(now)) ?? RateLimiter.resetMs(res.headers) ?? this.backoff(retry);
        this.limiter.block(now + Math.min(wait, this.opts.maxRetryAfterMs));
        lastClass = 'http_429';
        lastMessage = 'rate limited';
        continue;
      }
      if (res.status === 401 && this.oauth && !reauthorised) {
        // The token was revoked or expired early: fetch a new one, once, without counting a retry.
        this.token = undefined;
        reauthorised = true;
        retry--;
        continue;
      }
      return res;
    }
  }

  private backoff(retry: number): number {
    return backoffDelay(retry, this.opts.backoffBaseMs, this.opts.backoffMaxMs, this.rt.random);
  }

  /** The OAuth token, fetched once for all concurrent callers and refreshed before it expires. */
  private bearer(signal?: AbortSignal): Promise<string> {
    if (this.token && this.rt.now() < this.token.refreshAt) return Promise.resolve(this.token.value);
    this.tokenFlight ??= this.fetchToken(signal).finally(() => (this.tokenFlight = undefined));
    return this.tokenFlight;
  }

  private async fetchToken(signal?: AbortSignal): Promise<string> {
    this.tokenRequests++;
    const basic = Buffer.from(`${this.opts.clientId}:${this.opts.clientSecret}`).toString('base64');
    let res: Answer;
    try {
      res = await this.send(
        'POST',
        `${this.opts.baseUrl}/api/v1/access_token`,
        { 'user-agent': this.userAgent, authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        'grant_type=client_credentials',
        signal,
        (status) => status >= 200 && status < 300,
      );
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new RedditRequestError(`token_${errorClassOf(err)}`, `token request failed: ${describe(err)}`);
    }
    if (res.status < 200 || res.status >= 300) throw new RedditRequestError(`token_http_${res.status}`, `token request answered ${res.status} (check REDDIT_CLIENT_ID / REDDIT_CLIENT_SECRET)`);
    let body: { access_token?: unknown; expires_in?: unknown; error?: unknown };
    try {
      body = JSON.parse(res.text ?? '') as typeof body;
    } catch {
      throw new RedditRequestError('token_bad_json', 'token response is not JSON');
    }
    if (typeof body.access_token !== 'string' || body.access_token === '') {
      throw new RedditRequestError('token_refused', `token request refused${typeof body.error === 'string' ? ` (${body.error})` : ''}`);
    }
    const lifetimeMs = (typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600) * 1000;
    // Refresh ahead of expiry (a tenth of the lifetime, at most five minutes), so no call carries a stale token.
    const refreshAt = this.rt.now() + lifetimeMs - Math.min(5 * 60_000, lifetimeMs / 10);
    this.token = { value: body.access_token, refreshAt };
    return body.access_token;
  }

  /** One HTTP exchange, bounded by the timeout (connect to end of body). Bodies of other statuses are discarded. */
  private async send(
    method: 'GET' | 'POST',
    url: string,
    headers: Record<string, string>,
    body: string | null,
    signal: AbortSignal | undefined,
    readBody: (status: number) => boolean,
  ): Promise<Answer> {
    const timeout = AbortSignal.timeout(this.opts.timeoutMs);
    const all = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const res = await request(url, { method, headers, body, signal: all, dispatcher: this.dispatcher });
    if (!readBody(res.statusCode)) {
      await res.body.dump().catch(() => undefined);
      return { status: res.statusCode, headers: res.headers, text: null };
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > this.opts.maxBodyBytes) {
        res.body.destroy();
        throw new RedditRequestError('body_too_large', `response body over ${this.opts.maxBodyBytes} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
    return { status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') };
  }
}

function isRedditItself(base: string): boolean {
  try {
    const host = new URL(base).hostname;
    return host === 'reddit.com' || host === 'www.reddit.com' || base === DEFAULT_REDDIT_BASE_URL;
  } catch {
    return false;
  }
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Reddit's 403/404 bodies say why: `{"reason": "private"}`, `{"reason": "banned"}`; kept to a short token (it is stored in `last_error`). */
function reasonOf(text: string | null): string | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as { reason?: unknown };
    if (typeof v.reason !== 'string') return null;
    const reason = v.reason.toLowerCase().replace(/[^a-z0-9_]+/g, '_').slice(0, 40);
    return reason === '' ? null : reason;
  } catch {
    return null;
  }
}

/**
 * Errors that say Reddit (or the way to it) is down for now, not that the request is wrong:
 * timeouts, network errors, and a token endpoint answering 5xx or not at all.
 */
function isTransient(err: unknown): boolean {
  if (err instanceof RedditRequestError) return TRANSIENT_CLASS.test(err.errorClass);
  return true;
}

/** Error classes of an outage, not of the request: the poller does not hold them against the subreddit. */
export const TRANSIENT_CLASS = /^(token_)?(http_5\d\d|http_408|http_429|timeout|network(_.*)?|bad_json)$/;

function isJson(text: string | null): boolean {
  try {
    JSON.parse(text ?? '');
    return true;
  } catch {
    return false;
  }
}

function errorClassOf(err: unknown): string {
  if (err instanceof RedditRequestError) return err.errorClass;
  const e = err as { name?: string; code?: string; cause?: { code?: string } };
  if (e?.name === 'TimeoutError' || e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT') return 'timeout';
  const code = e?.code ?? e?.cause?.code;
  return code ? `network_${String(code).toLowerCase()}` : 'network';
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code ?? (err.cause as { code?: unknown } | undefined)?.code;
    return `${err.name}${code ? ` ${String(code)}` : ''}: ${err.message}`;
  }
  return String(err);
}
