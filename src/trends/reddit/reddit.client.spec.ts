import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TrendsModuleOptions } from '../trends.options';
import type { RedditRuntime } from './rate-limit';
import { BY_ID_BATCH, RedditClient, RedditRequestError, USER_AGENT } from './reddit.client';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  hang?: boolean;
}

/** A scripted local server: answers the n-th request with `script(req, n)`. */
async function server(script: (req: Seen, n: number) => Reply) {
  const seen: Seen[] = [];
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const s: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      seen.push(s);
      const r = script(s, seen.length);
      if (r.hang) return;
      res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers });
      res.end(r.body ?? '');
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return {
    seen,
    base: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (srv.closeAllConnections(), srv.close(() => resolve()))),
  };
}

const post = (id: string, over: Record<string, unknown> = {}) => ({
  kind: 't3',
  data: { id, name: `t3_${id}`, subreddit: 'Node', title: `post ${id}`, author: 'someone', created_utc: 1_700_000_000, score: 1, num_comments: 0, permalink: `/r/node/comments/${id}/x/`, ...over },
});
const listing = (...children: unknown[]) => JSON.stringify({ kind: 'Listing', data: { after: null, dist: children.length, children } });

/** Time moves only when the client sleeps; every sleep is recorded. */
function fakeRuntime(): RedditRuntime & { slept: number[]; t: number } {
  const rt = {
    t: 1_700_000_000_000,
    slept: [] as number[],
    now: () => rt.t,
    sleep: async (ms: number) => {
      rt.slept.push(Math.round(ms));
      rt.t += ms;
    },
    random: () => 0.5,
  };
  return rt;
}

describe('RedditClient', () => {
  let srv: Awaited<ReturnType<typeof server>>;
  let clients: RedditClient[] = [];
  const make = (opts: Partial<TrendsModuleOptions>, rt: RedditRuntime = fakeRuntime()) => {
    const c = new RedditClient({ redditBaseUrl: srv.base, pollerTuning: { backoffBaseMs: 1000, maxRetries: 3, quotaPerMinute: 100_000 }, ...opts }, rt);
    clients.push(c);
    return c;
  };
  afterEach(async () => {
    await Promise.all(clients.map((c) => c.onApplicationShutdown()));
    clients = [];
    await srv?.close();
  });

  it('reads /r/{sub}/new.json with a descriptive User-Agent and parses the listing', async () => {
    srv = await server(() => ({ body: listing(post('a1'), post('b2', { score: 7 }), { kind: 't1', data: {} }) }));
    const res = await make({}).fetchNew('node');
    expect(res).toMatchObject({ kind: 'ok', skipped: 1 });
    expect(res.kind === 'ok' && res.posts.map((p) => [p.id, p.subreddit, p.score])).toEqual([
      ['a1', 'node', 1],
      ['b2', 'node', 7],
    ]);
    expect(srv.seen[0].url).toBe('/r/node/new.json?limit=100&raw_json=1');
    expect(srv.seen[0].headers['user-agent']).toBe(USER_AGENT);
    expect(USER_AGENT).toMatch(/^node:trendhooks:\d+\.\d+\.\d+ \(\+https:\/\/github\.com\/.+; set REDDIT_USER_AGENT to your own\)$/);
    // It names no Reddit account: the operator's is theirs to give (Reddit forbids a misleading User-Agent).
    expect(USER_AGENT).not.toMatch(/\/u\//);
    expect(srv.seen[0].headers.authorization).toBeUndefined();
  });

  it('sends the configured User-Agent (REDDIT_USER_AGENT) instead of its own, token request included', async () => {
    srv = await server((req) => (req.url === '/api/v1/access_token' ? { body: JSON.stringify({ access_token: 't', token_type: 'bearer', expires_in: 3600, scope: '*' }) } : { body: listing() }));
    const agent = 'linux:com.example.trends:2.1 (by /u/example)';
    await make({ redditUserAgent: agent, redditClientId: 'cid', redditClientSecret: 'cs' }).fetchNew('node');
    expect(srv.seen.length).toBeGreaterThanOrEqual(2);
    for (const s of srv.seen) expect(s.headers['user-agent']).toBe(agent);
  });

  it('waits for the reset before the next call when X-Ratelimit-Remaining reaches 0', async () => {
    srv = await server(() => ({ headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1', 'x-ratelimit-used': '100' }, body: listing() }));
    const rt = fakeRuntime();
    const c = make({}, rt);
    await c.fetchNew('node');
    expect(rt.slept).toEqual([]);
    await c.fetchNew('other');
    expect(rt.slept).toEqual([1000]);
  });

  it('backs off a 429 for its Retry-After, for every caller of the client', async () => {
    srv = await server((_r, n) => (n === 1 ? { status: 429, headers: { 'retry-after': '7' } } : { body: listing(post('a1')) }));
    const rt = fakeRuntime();
    const res = await make({}, rt).fetchNew('node');
    expect(res.kind).toBe('ok');
    expect(rt.slept).toEqual([7000]);
    expect(srv.seen).toHaveLength(2);
  });

  it('uses X-Ratelimit-Reset for a 429 without Retry-After', async () => {
    srv = await server((_r, n) => (n === 1 ? { status: 429, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '42' } } : { body: listing() }));
    const rt = fakeRuntime();
    await make({}, rt).fetchNew('node');
    expect(rt.slept).toEqual([42_000]);
  });

  it('retries 5xx with exponential backoff and jitter, then succeeds', async () => {
    srv = await server((_r, n) => (n <= 2 ? { status: 503 } : { body: listing(post('a1')) }));
    const rt = fakeRuntime();
    const res = await make({}, rt).fetchNew('node');
    expect(res.kind).toBe('ok');
    // random 0.5: ¾ of the nominal 1 s, 2 s.
    expect(rt.slept).toEqual([750, 1500]);
  });

  it('honours a 503 Retry-After instead of its own backoff', async () => {
    srv = await server((_r, n) => (n === 1 ? { status: 503, headers: { 'retry-after': '3' } } : { body: listing() }));
    const rt = fakeRuntime();
    await make({}, rt).fetchNew('node');
    expect(rt.slept).toEqual([3000]);
  });

  it('gives up after the retries with the error class of the last answer', async () => {
    srv = await server(() => ({ status: 500 }));
    const rt = fakeRuntime();
    const err = await make({}, rt).fetchNew('node').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedditRequestError);
    expect((err as RedditRequestError).errorClass).toBe('http_500');
    expect(srv.seen).toHaveLength(4);
    expect(rt.slept).toEqual([750, 1500, 3000]);
  });

  it('times out a hanging request and retries it', async () => {
    srv = await server((_r, n) => (n === 1 ? { hang: true } : { body: listing(post('a1')) }));
    const rt = fakeRuntime();
    const res = await make({ redditTimeoutMs: 200 }, rt).fetchNew('node');
    expect(res.kind).toBe('ok');
    expect(srv.seen).toHaveLength(2);
    expect(rt.slept).toEqual([750]);
  });

  it('classifies a request that keeps timing out as timeout', async () => {
    srv = await server(() => ({ hang: true }));
    const err = await make({ redditTimeoutMs: 100, pollerTuning: { maxRetries: 1 } }).fetchNew('node').catch((e: unknown) => e);
    expect((err as RedditRequestError).errorClass).toBe('timeout');
  });

  it('retries a 200 whose body is not JSON (an outage page)', async () => {
    srv = await server((_r, n) => (n === 1 ? { body: '<html>down</html>', headers: { 'content-type': 'text/html' } } : { body: listing() }));
    const rt = fakeRuntime();
    expect((await make({}, rt).fetchNew('node')).kind).toBe('ok');
    expect(srv.seen).toHaveLength(2);
  });

  it('never follows a redirect: an unknown subreddit is unavailable', async () => {
    srv = await server((r) => (r.url.startsWith('/r/') ? { status: 302, headers: { location: 'https://evil.example/subreddits/search.json?q=nope' } } : { body: listing() }));
    const res = await make({}).fetchNew('nope');
    expect(res).toEqual({ kind: 'unavailable', status: 302, detail: 'HTTP 302 to https://evil.example/subreddits/search.json?q=nope', reason: null });
    expect(srv.seen).toHaveLength(1);
  });

  it('reports private (403) and banned (404) subreddits as unavailable, with Reddit\'s reason', async () => {
    srv = await server((r) => (r.url.startsWith('/r/secret/') ? { status: 403, body: '{"reason": "private", "message": "Forbidden", "error": 403}' } : { status: 404, body: '{"reason": "banned"}' }));
    const c = make({});
    expect(await c.fetchNew('secret')).toEqual({ kind: 'unavailable', status: 403, detail: 'HTTP 403 (private)', reason: 'private' });
    expect(await c.fetchNew('gone')).toEqual({ kind: 'unavailable', status: 404, detail: 'HTTP 404 (banned)', reason: 'banned' });
  });

  it('fails on other 4xx without retrying', async () => {
    srv = await server(() => ({ status: 400 }));
    const err = await make({}).fetchNew('node').catch((e: unknown) => e);
    expect((err as RedditRequestError).errorClass).toBe('http_400');
    expect(srv.seen).toHaveLength(1);
  });

  it('re-reads posts by fullname, at most 100 per request', async () => {
    srv = await server((r) => {
      const names = decodeURIComponent(r.url.slice('/by_id/'.length).split('.json')[0]).split(',');
      return { body: listing(...names.map((n) => post(n.slice(3), { score: 5 }))) };
    });
    const ids = Array.from({ length: 250 }, (_, i) => `p${i.toString(36)}`);
    const posts = await make({}).fetchByIds(ids);
    expect(posts.map((p) => p.id)).toEqual(ids);
    expect(srv.seen.map((s) => s.url.split(',').length)).toEqual([BY_ID_BATCH, BY_ID_BATCH, 50]);
    expect(srv.seen[0].url).toMatch(/^\/by_id\/t3_p0,t3_p1,.*\.json\?raw_json=1$/);
  });

  describe('with app-only OAuth', () => {
    let tokens: number;
    const oauthServer = (opts: { expiresIn?: number; reject401Once?: boolean } = {}) => {
      tokens = 0;
      let rejected = false;
      return server((r) => {
        if (r.url === '/api/v1/access_token') {
          tokens++;
          return { body: JSON.stringify({ access_token: `tok${tokens}`, token_type: 'bearer', expires_in: opts.expiresIn ?? 86400, scope: '*' }) };
        }
        if (opts.reject401Once && !rejected) {
          rejected = true;
          return { status: 401 };
        }
        return { body: listing() };
      });
    };

    it('fetches one token with the client credentials and sends it as a bearer', async () => {
      srv = await oauthServer();
      const c = make({ redditClientId: 'cid', redditClientSecret: 'csecret' });
      await Promise.all([c.fetchNew('a'), c.fetchNew('b'), c.fetchNew('c')]);
      await c.fetchNew('d');
      expect(tokens).toBe(1);
      const t = srv.seen.find((s) => s.url === '/api/v1/access_token')!;
      expect(t.method).toBe('POST');
      expect(t.body).toBe('grant_type=client_credentials');
      expect(t.headers.authorization).toBe(`Basic ${Buffer.from('cid:csecret').toString('base64')}`);
      expect(t.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(t.headers['user-agent']).toBe(USER_AGENT);
      const api = srv.seen.filter((s) => s.url.startsWith('/r/'));
      expect(api).toHaveLength(4);
      for (const s of api) expect(s.headers.authorization).toBe('bearer tok1');
    });

    it('refreshes the token before it expires', async () => {
      srv = await oauthServer({ expiresIn: 3600 });
      const rt = fakeRuntime();
      const c = make({ redditClientId: 'cid', redditClientSecret: 'csecret' }, rt);
      await c.fetchNew('a');
      rt.t += 3600_000 - 6 * 60_000; // still 6 min left (refresh margin: 1/10 of the lifetime, at most 5 min)
      await c.fetchNew('a');
      expect(tokens).toBe(1);
      rt.t += 2 * 60_000; // 4 min left: inside the margin
      await c.fetchNew('a');
      expect(tokens).toBe(2);
      expect(srv.seen.at(-1)!.headers.authorization).toBe('bearer tok2');
    });

    it('gets a new token once when the API answers 401', async () => {
      srv = await oauthServer({ reject401Once: true });
      const c = make({ redditClientId: 'cid', redditClientSecret: 'csecret' });
      expect((await c.fetchNew('a')).kind).toBe('ok');
      expect(tokens).toBe(2);
    });

    it('reports refused credentials as a token error', async () => {
      srv = await server(() => ({ status: 401, body: '{"message": "Unauthorized", "error": 401}' }));
      const err = await make({ redditClientId: 'cid', redditClientSecret: 'wrong' }).fetchNew('a').catch((e: unknown) => e);
      expect((err as RedditRequestError).errorClass).toBe('token_http_401');
    });

    it('sends API calls to oauth.reddit.com when the base is Reddit itself', () => {
      srv = undefined as never;
      const c = new RedditClient({ redditClientId: 'cid', redditClientSecret: 'x' });
      clients.push(c);
      expect(c.apiBase).toBe('https://oauth.reddit.com');
      const pub = new RedditClient({});
      clients.push(pub);
      expect(pub.apiBase).toBe('https://www.reddit.com');
    });
  });

  it('stops at once when the caller aborts during a backoff', async () => {
    srv = await server(() => ({ status: 429, headers: { 'retry-after': '3600' } }));
    const c = make({}, { now: () => Date.now(), random: () => 0.5, sleep: (ms, signal) => new Promise((r, reject) => (signal?.addEventListener('abort', () => reject(signal.reason)), setTimeout(r, ms).unref())) });
    const ac = new AbortController();
    const p = c.fetchNew('node', { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await expect(p).rejects.toBeDefined();
  });

  it('runs the pre-request hook before every request, after any wait', async () => {
    srv = await server((_r, n) => (n === 1 ? { status: 503 } : { body: listing() }));
    const rt = fakeRuntime();
    const calls: number[] = [];
    await make({}, rt).fetchNew('node', { beforeRequest: async () => void calls.push(rt.t) });
    expect(calls).toHaveLength(2);
    expect(calls[1] - calls[0]).toBe(750);
  });
});
