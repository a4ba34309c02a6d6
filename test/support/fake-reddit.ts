import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A post as the fake serves it (Reddit's field names). */
export interface FakePost {
  id: string;
  subreddit: string;
  title: string;
  author: string;
  selftext: string;
  score: number;
  num_comments: number;
  /** Seconds, as Reddit sends it. */
  created_utc: number;
  /** Left out of /new.json (it scrolled off the first page), still served by /by_id. */
  hiddenFromNew?: boolean;
  /** Reddit's marker of a removed post (`moderator`, `deleted`, …); null while it is up. */
  removed_by_category?: string | null;
}

export interface FakeRequest {
  n: number;
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Subreddits the request is about (the listing's, or the re-read posts'). */
  subreddits: string[];
  at: number;
  endAt?: number;
  /** The status answered. */
  status?: number;
}

export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * A local stand-in for Reddit on 127.0.0.1: `/r/{sub}/new.json`, `/by_id/{names}.json` and
 * `/api/v1/access_token`, in Reddit's exact JSON shapes. Records every request, and whether two
 * requests about one subreddit were ever in flight at the same time.
 */
export class FakeReddit {
  readonly requests: FakeRequest[] = [];
  readonly posts = new Map<string, FakePost>();
  /** Answered with a redirect to search, as Reddit does for unknown subreddits. */
  readonly unknown = new Set<string>();
  /** Answered 403 `{"reason": "private"}`. */
  readonly private = new Set<string>();
  /** Answered 404 `{"reason": "banned"}`. */
  readonly banned = new Set<string>();
  /** Subreddits that had two requests in flight at once. */
  readonly overlaps: string[] = [];
  /** Scripted answers: return a reply to override the default one. */
  behaviour: (req: FakeRequest) => FakeReply | undefined = () => undefined;
  /** Added to every answer (widens the window for overlaps). */
  delayMs = 0;
  /** When set, the token endpoint checks these and the API requires an issued bearer token. */
  credentials?: { id: string; secret: string };
  readonly tokens: string[] = [];
  /**
   * Reddit's per-client quota, when set: every API request counts (an error answer too), the
   * headers report what is left of the window, and a request past it gets 429.
   */
  quota?: { perWindow: number; windowMs: number };
  private window = { start: -Infinity, used: 0 };
  private readonly inflight = new Map<string, number>();
  private readonly sockets = new Set<Socket>();
  private seq = 0;
  private waiters: { pred: () => boolean; resolve: () => void }[] = [];

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<FakeReddit> {
    const server = http.createServer();
    const f = new FakeReddit(server);
    server.on('connection', (s: Socket) => {
      f.sockets.add(s);
      s.on('close', () => f.sockets.delete(s));
    });
    server.on('request', (req, res) => f.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return f;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** A new post created now (or `ageMs` ago) in `subreddit`. */
  addPost(subreddit: string, over: Partial<FakePost> & { ageMs?: number } = {}): FakePost {
    const id = over.id ?? `f${(this.seq++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const { ageMs, ...rest } = over;
    const p: FakePost = {
      id,
      subreddit,
      title: `post ${id} about things`,
      author: 'poster_one',
      selftext: '',
      score: 1,
      num_comments: 0,
      created_utc: (Date.now() - (ageMs ?? 0)) / 1000,
      ...rest,
    };
    this.posts.set(id, p);
    return p;
  }

  apiRequests(): FakeRequest[] {
    return this.requests.filter((r) => r.path.startsWith('/r/') || r.path.startsWith('/by_id/'));
  }

  newRequests(subreddit?: string): FakeRequest[] {
    return this.requests.filter((r) => r.path.startsWith('/r/') && r.path.includes('/new.json') && (!subreddit || r.subreddits.includes(subreddit)));
  }

  /** Resolves once `pred` holds; rejects after `timeoutMs`. */
  waitUntil(pred: (f: FakeReddit) => boolean, timeoutMs = 15_000, what = 'condition'): Promise<void> {
    if (pred(this)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`fake reddit: timed out waiting for ${what} (${this.requests.length} requests so far)`)), timeoutMs);
      this.waiters.push({ pred: () => pred(this), resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(() => r(undefined)));
  }

  private notify(): void {
    this.waiters = this.waiters.filter((w) => {
      if (!w.pred()) return true;
      w.resolve();
      return false;
    });
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const rec: FakeRequest = {
        n: this.requests.length + 1,
        method: req.method ?? '',
        path: `${url.pathname}${url.search}`,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        subreddits: this.subredditsOf(url.pathname),
        at: Date.now(),
      };
      this.requests.push(rec);
      for (const s of rec.subreddits) {
        const n = (this.inflight.get(s) ?? 0) + 1;
        this.inflight.set(s, n);
        if (n > 1) this.overlaps.push(s);
      }
      const limits = this.quota && (rec.subreddits.length > 0 || url.pathname.startsWith('/by_id/')) ? this.count(rec.at) : null;
      const reply = limits?.over
        ? { status: 429, headers: limits.headers, body: JSON.stringify({ message: 'Too Many Requests', error: 429 }) }
        : (this.behaviour(rec) ?? this.answer(rec, url));
      if (limits) reply.headers = { ...reply.headers, ...limits.headers };
      const send = () => {
        // Counted as finished when the answer leaves, before the client can start another request.
        for (const s of rec.subreddits) this.inflight.set(s, (this.inflight.get(s) ?? 1) - 1);
        rec.endAt = Date.now();
        rec.status = reply.status ?? 200;
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json; charset=UTF-8', ...reply.headers });
        res.end(reply.body ?? '');
        this.notify();
      };
      this.notify();
      if (this.delayMs > 0) setTimeout(send, this.delayMs);
      else send();
    });
  }

  /** Counts a request against the quota's window (fixed windows, as Reddit's). */
  private count(now: number): { over: boolean; headers: Record<string, string> } {
    const q = this.quota!;
    if (now >= this.window.start + q.windowMs) this.window = { start: now, used: 0 };
    this.window.used++;
    const headers = {
      'x-ratelimit-used': String(this.window.used),
      'x-ratelimit-remaining': String(Math.max(0, q.perWindow - this.window.used)),
      'x-ratelimit-reset': ((this.window.start + q.windowMs - now) / 1000).toFixed(3),
    };
    return { over: this.window.used > q.perWindow, headers };
  }

  private subredditsOf(pathname: string): string[] {
    const sub = /^\/r\/([^/]+)\/new\.json$/.exec(pathname);
    if (sub) return decodeURIComponent(sub[1]).toLowerCase().split('+');
    const byId = /^\/by_id\/(.+)\.json$/.exec(pathname);
    if (byId) {
      const subs = new Set<string>();
      for (const name of decodeURIComponent(byId[1]).split(',')) {
        const p = this.posts.get(name.replace(/^t3_/, ''));
        if (p) subs.add(p.subreddit.toLowerCase());
      }
      return [...subs];
    }
    return [];
  }

  /** Reddit's default answers. */
  private answer(rec: FakeRequest, url: URL): FakeReply {
    const limits = { 'x-ratelimit-used': '4', 'x-ratelimit-remaining': '596.0', 'x-ratelimit-reset': '300' };
    if (url.pathname === '/api/v1/access_token') return this.token(rec);
    if (this.credentials && !this.tokens.some((t) => rec.headers.authorization === `bearer ${t}`)) {
      return { status: 401, body: JSON.stringify({ message: 'Unauthorized', error: 401 }) };
    }
    const sub = /^\/r\/([^/]+)\/new\.json$/.exec(url.pathname);
    if (sub) {
      // One subreddit, or a multireddit (`a+b+c`): Reddit leaves unknown, private and banned members out of a multireddit.
      const names = decodeURIComponent(sub[1]).toLowerCase().split('+');
      if (names.length === 1) {
        const [name] = names;
        if (this.unknown.has(name)) return { status: 302, headers: { location: `/subreddits/search.json?q=${name}` }, body: '' };
        if (this.private.has(name)) return { status: 403, headers: limits, body: JSON.stringify({ reason: 'private', message: 'Forbidden', error: 403 }) };
        if (this.banned.has(name)) return { status: 404, headers: limits, body: JSON.stringify({ reason: 'banned', message: 'Not Found', error: 404 }) };
      }
      const wanted = new Set(names.filter((n) => !this.unknown.has(n) && !this.private.has(n) && !this.banned.has(n)));
      const limit = Math.min(100, Number(url.searchParams.get('limit') ?? 25));
      const all = [...this.posts.values()].filter((p) => wanted.has(p.subreddit.toLowerCase()) && !p.hiddenFromNew).sort((a, b) => b.created_utc - a.created_utc || (a.id < b.id ? 1 : -1));
      // `after=t3_x`: the posts after x in this order; Reddit serves no more than 1,000 items of a listing.
      const after = url.searchParams.get('after');
      const from = after ? all.findIndex((p) => `t3_${p.id}` === after) + 1 : 0;
      const posts = from === 0 && after ? [] : all.slice(0, 1000).slice(from, from + limit);
      return { headers: limits, body: listing(posts, from + posts.length < Math.min(all.length, 1000)) };
    }
    const byId = /^\/by_id\/(.+)\.json$/.exec(url.pathname);
    if (byId) {
      const posts = decodeURIComponent(byId[1])
        .split(',')
        .map((n) => this.posts.get(n.replace(/^t3_/, '')))
        .filter((p): p is FakePost => p !== undefined);
      return { headers: limits, body: listing(posts) };
    }
    return { status: 404, body: JSON.stringify({ message: 'Not Found', error: 404 }) };
  }

  private token(rec: FakeRequest): FakeReply {
    const expected = this.credentials ? `Basic ${Buffer.from(`${this.credentials.id}:${this.credentials.secret}`).toString('base64')}` : null;
    if (rec.method !== 'POST' || rec.body !== 'grant_type=client_credentials' || (expected && rec.headers.authorization !== expected)) {
      return { status: 401, body: JSON.stringify({ message: 'Unauthorized', error: 401 }) };
    }
    const token = `fake-token-${this.tokens.length + 1}`;
    this.tokens.push(token);
    return { body: JSON.stringify({ access_token: token, token_type: 'bearer', expires_in: 86400, scope: '*' }) };
  }
}

/** `{"kind": "Listing", "data": {…, "children": [{"kind": "t3", "data": {…}}]}}` as Reddit sends it. */
function listing(posts: FakePost[], more = posts.length > 0): string {
  return JSON.stringify({
    kind: 'Listing',
    data: {
      after: more && posts.length > 0 ? `t3_${posts[posts.length - 1].id}` : null,
      dist: posts.length,
      modhash: '',
      geo_filter: null,
      children: posts.map((p) => ({ kind: 't3', data: thing(p) })),
      before: null,
    },
  });
}

function thing(p: FakePost): Record<string, unknown> {
  const permalink = `/r/${p.subreddit}/comments/${p.id}/${p.title.toLowerCase().replace(/[^a-z0-9]+/g, '_').slice(0, 40)}/`;
  return {
    approved_at_utc: null,
    subreddit: p.subreddit,
    selftext: p.selftext,
    author_fullname: `t2_${p.author.length.toString(36)}x`,
    saved: false,
    title: p.title,
    subreddit_name_prefixed: `r/${p.subreddit}`,
    name: `t3_${p.id}`,
    upvote_ratio: 1.0,
    ups: p.score,
    score: p.score,
    is_self: p.selftext !== '',
    created: p.created_utc,
    domain: `self.${p.subreddit}`,
    over_18: false,
    subreddit_id: 't5_2qh1i',
    id: p.id,
    author: p.author,
    num_comments: p.num_comments,
    permalink,
    url: `https://www.reddit.com${permalink}`,
    subreddit_subscribers: 123456,
    created_utc: p.created_utc,
    removed_by_category: p.removed_by_category ?? null,
    num_crossposts: 0,
  };
}
