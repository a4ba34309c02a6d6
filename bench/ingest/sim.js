'use strict';
/**
 * The simulated Reddit of bench/ingest (ingest.js, outage.js): a seeded random generator and a
 * fake Reddit on 127.0.0.1 serving `/r/{a+b+c}/new.json` (`after` paging, no item past the
 * 1,000th), `/by_id/{names}.json` and `/api/v1/access_token`, with Reddit's quota per OAuth client
 * (`perWindow` requests per `windowMs`, every request counted, 429 past it), a few random 429s,
 * and an outage switch (503 on everything). It records every request and, per post, when a
 * listing first served it (`listedAt`).
 */
const http = require('node:http');

// A small seeded generator, so a run can be repeated.
let seed = 7;
const reseed = (s) => (seed = s >>> 0 || 1);
const rand = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32);
const gauss = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());

function poisson(mean) {
  if (mean > 30) return Math.max(0, Math.round(mean + Math.sqrt(mean) * gauss()));
  let n = 0;
  let p = Math.exp(-mean);
  let c = p;
  const u = rand();
  while (u > c) {
    n++;
    p *= mean / n;
    c += p;
  }
  return n;
}

function thing(p) {
  const permalink = `/r/${p.sub}/comments/${p.id}/post_${p.id}/`;
  return {
    kind: 't3',
    data: {
      subreddit: p.sub, selftext: '', title: `post ${p.id} in ${p.sub} about things`, name: `t3_${p.id}`, id: p.id,
      author: `author${p.n % 500}`, score: 1, num_comments: 0, permalink, url: `https://www.reddit.com${permalink}`,
      created_utc: p.created / 1000, created: p.created / 1000, over_18: false, is_self: true,
    },
  };
}

class FakeReddit {
  constructor(subs, { windowMs, perWindow, random429 = 0.001 }) {
    this.windowMs = windowMs;
    this.perWindow = perWindow;
    this.random429 = random429;
    this.subs = new Map(subs.map((s) => [s.name, s]));
    this.byId = new Map();
    this.requests = []; // { at, client, kind: 'listing'|'by_id'|'token', subs, first, status }
    this.windows = new Map(); // client → { start, used }
    this.down = false;
    this.tokens = new Map();
    this.seq = 0;
  }

  listen() {
    this.server = http.createServer((req, res) => this.handle(req, res));
    return new Promise((r) => this.server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${this.server.address().port}`)));
  }

  add(sub, created) {
    const p = { id: `p${(this.seq++).toString(36).padStart(8, '0')}`, n: this.seq, sub: sub.name, created };
    sub.posts.push(p);
    this.byId.set(p.id, p);
    return p;
  }

  handle(req, res) {
    const url = new URL(req.url, 'http://x');
    const send = (status, body, headers = {}) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
      res.end(body);
    };
    if (url.pathname === '/api/v1/access_token') {
      const basic = Buffer.from(String(req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
      const id = basic.split(':')[0];
      const token = `tok_${id}`;
      this.tokens.set(token, id);
      this.requests.push({ at: Date.now(), client: id, kind: 'token', subs: [], status: 200 });
      req.resume();
      return send(200, JSON.stringify({ access_token: token, token_type: 'bearer', expires_in: 86400, scope: '*' }));
    }
    const client = this.tokens.get(String(req.headers.authorization ?? '').replace(/^bearer /, ''));
    if (!client) return send(401, '{"message":"Unauthorized","error":401}');
    const now = Date.now();
    const rec = { at: now, client, kind: 'other', subs: [], first: false, status: 200 };
    this.requests.push(rec);
    // Reddit's window: this.perWindow queries per 10 (simulated) minutes per client.
    let w = this.windows.get(client);
    if (!w || now >= w.start + this.windowMs) this.windows.set(client, (w = { start: now - ((now - (w?.start ?? now)) % this.windowMs), used: 0 }));
    w.used++;
    const limits = {
      'x-ratelimit-used': String(w.used),
      'x-ratelimit-remaining': String(Math.max(0, this.perWindow - w.used)),
      'x-ratelimit-reset': String(Math.max(0, (w.start + this.windowMs - now) / 1000).toFixed(2)),
    };
    if (w.used > this.perWindow) return (rec.status = 429), send(429, '{"message":"Too Many Requests","error":429}', limits);
    if (this.down) return (rec.status = 503), send(503, '<html>down</html>', { 'content-type': 'text/html' });
    if (rand() < this.random429) return (rec.status = 429), send(429, '{"message":"Too Many Requests","error":429}', { ...limits, 'retry-after': '1' });
    const m = /^\/r\/([^/]+)\/new\.json$/.exec(url.pathname);
    if (m) {
      const names = decodeURIComponent(m[1]).toLowerCase().split('+');
      rec.kind = 'listing';
      rec.subs = names;
      const after = url.searchParams.get('after');
      rec.first = !after;
      const limit = Math.min(100, Number(url.searchParams.get('limit') ?? 25));
      let before = Infinity;
      let beforeId = '';
      if (after) {
        const a = this.byId.get(after.replace(/^t3_/, ''));
        if (!a) return send(200, JSON.stringify({ kind: 'Listing', data: { after: null, children: [] } }), limits);
        before = a.created;
        beforeId = a.id;
      }
      const older = (p) => p.created < before || (p.created === before && p.id < beforeId);
      // Newest first across the members; at most the 1,000 newest items of the listing are served.
      let rank = 0;
      const cand = [];
      for (const n of names) {
        const s = this.subs.get(n);
        if (!s) continue;
        let i = s.posts.length - 1;
        for (; i >= 0 && !older(s.posts[i]); i--) rank++;
        // One more than a page per member, so a page of one subreddit knows whether more follow.
        for (let j = i; j >= 0 && j > i - limit - 1; j--) cand.push(s.posts[j]);
      }
      cand.sort((a, b) => b.created - a.created || (a.id < b.id ? 1 : -1));
      const page = rank >= 1000 ? [] : cand.slice(0, Math.min(limit, 1000 - rank));
      for (const p of page) p.listedAt ??= now;
      const more = page.length === limit && rank + page.length < 1000 && cand.length > page.length;
      return send(200, JSON.stringify({ kind: 'Listing', data: { after: more ? `t3_${page[page.length - 1].id}` : null, dist: page.length, children: page.map(thing) } }), limits);
    }
    const b = /^\/by_id\/(.+)\.json$/.exec(url.pathname);
    if (b) {
      rec.kind = 'by_id';
      const posts = decodeURIComponent(b[1]).split(',').map((x) => this.byId.get(x.replace(/^t3_/, ''))).filter(Boolean);
      rec.ids = posts.length;
      return send(200, JSON.stringify({ kind: 'Listing', data: { after: null, children: posts.map(thing) } }), limits);
    }
    return send(404, '{"message":"Not Found","error":404}');
  }
}

const pct = (xs, q) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const r1 = (x) => (x === null ? null : Math.round(x * 10) / 10);


module.exports = { rand, gauss, reseed, poisson, FakeReddit, pct, r1 };
