import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { dialectOf } from '../src/database/dialect';
import { CursorCodec, CursorKeyRing } from '../src/pagination/cursor-codec';
import { IngestService } from '../src/posts/ingest.service';
import { PostEntity } from '../src/posts/post.entity';
import { PostStore as PostRepository } from '../src/posts/post.store';
import { POSTS_SUBREDDIT_ROUTE } from '../src/posts/posts.service';
import { testDatabases } from './support/databases';
import { startTestApp, TestApp } from './support/app';
import { mulberry32 } from '../src/common/prng';

const ISO_MS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const BASE_MS = Date.UTC(2024, 0, 1);
const run = randomBytes(2).toString('hex');
let seq = 0;

/** Names no other test uses (≤ 21 characters, Reddit's rules). */
const uniqueName = (prefix: string) => `${prefix}${run}_${(seq++).toString(36)}`;
// Fixed-length lower-case ids order the same under every collation the databases may use.
const newPostId = () => `${run}${(seq++).toString(36).padStart(8, '0')}`;

function expectError(res: { status: number; body: any; headers: Record<string, string> }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
}

function makePost(over: Partial<PostEntity> & { subreddit: string; createdAt: Date }): PostEntity {
  const id = over.id ?? newPostId();
  const author = over.author ?? 'someone';
  return {
    id,
    author,
    authorKey: author.toLowerCase(),
    title: `title ${id}`,
    selftext: '',
    url: `https://example.com/${id}`,
    permalink: `/r/${over.subreddit}/comments/${id}/t/`,
    score: 1,
    numComments: 0,
    firstSeenAt: new Date(BASE_MS),
    updatedAt: new Date(BASE_MS),
    ...over,
  };
}

/** Newest first by (created_at, id), as the routes order. */
const newestFirst = (a: PostEntity, b: PostEntity) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

describe.each(testDatabases())('posts API on %s', (_name, makeDb) => {
  let t: TestApp;
  let repo: PostRepository;

  beforeAll(async () => {
    t = await startTestApp(makeDb());
    repo = t.app.get(PostRepository);
  });
  afterAll(() => t?.close());

  /** `n` posts; created_at repeats in threes so the id tie-breaker is exercised. */
  async function seed(n: number, over: Partial<PostEntity> & { subreddit?: string } = {}): Promise<PostEntity[]> {
    const subreddit = over.subreddit ?? uniqueName('s');
    const rows = Array.from({ length: n }, (_, i) => makePost({ subreddit, createdAt: new Date(BASE_MS + Math.floor(i / 3) * 1000), ...over }));
    await repo.upsertMany(rows);
    return rows.sort(newestFirst);
  }

  async function walk(url: string, auth: Record<string, string>, limit: number, between?: (page: number) => Promise<void>) {
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 1000; page++) {
      const res = await t.http().get(url).query(cursor ? { limit, cursor } : { limit }).set(auth);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
      ids.push(...res.body.data.map((p: { id: string }) => p.id));
      cursor = res.body.meta.page.next_cursor ?? undefined;
      if (!cursor) return ids;
      await between?.(page);
    }
    throw new Error('walk did not end');
  }

  describe('listing', () => {
    it('answers newest first with the post resource and a page of exactly {limit, next_cursor}', async () => {
      const sub = uniqueName('s');
      const [older, newer] = [
        makePost({ subreddit: sub, createdAt: new Date(BASE_MS), author: 'Alice_1', score: -3, numComments: 2, selftext: 'hi' }),
        makePost({ subreddit: sub, createdAt: new Date(BASE_MS + 1500) }),
      ];
      await repo.upsertMany([older, newer]);
      const c = await t.customer('free');
      const res = await t.http().get(`/v1/subreddits/${sub}/posts`).set(c.auth);
      expect(res.status).toBe(200);
      expect(res.headers['x-request-id']).toBe(res.body.meta.request_id);
      expect(res.headers['x-ratelimit-limit']).toBe('60');
      expect(res.body.data.map((p: { id: string }) => p.id)).toEqual([newer.id, older.id]);
      expect(res.body.data[1]).toEqual({
        id: older.id,
        name: `t3_${older.id}`,
        subreddit: sub,
        author: 'Alice_1',
        title: older.title,
        selftext: 'hi',
        url: older.url,
        permalink: `https://www.reddit.com/r/${sub}/comments/${older.id}/t/`,
        score: -3,
        num_comments: 2,
        created_at: new Date(BASE_MS).toISOString(),
      });
      expect(res.body.data[0].created_at).toMatch(ISO_MS_RE);
      expect(res.body.meta.page).toStrictEqual({ limit: 25, next_cursor: null });
      expect(Object.keys(res.body.meta.page)).toEqual(['limit', 'next_cursor']);

      const paged = await t.http().get(`/v1/subreddits/${sub}/posts?limit=1`).set(c.auth);
      expect(Object.keys(paged.body.meta.page)).toEqual(['limit', 'next_cursor']);
      expect(paged.body.meta.page.next_cursor).toEqual(expect.any(String));
      const last = await t.http().get(`/v1/subreddits/${sub}/posts`).query({ limit: 1, cursor: paged.body.meta.page.next_cursor }).set(c.auth);
      expect(Object.keys(last.body.meta.page)).toEqual(['limit', 'next_cursor']);
      expect(last.body.data.map((p: { id: string }) => p.id)).toEqual([older.id]);
      expect(last.body.meta.page.next_cursor).toBeNull();
    });

    it('answers an empty list for a subreddit or user without posts', async () => {
      const c = await t.customer('pro');
      for (const url of [`/v1/subreddits/${uniqueName('s')}/posts`, `/v1/users/${uniqueName('u')}/posts`]) {
        const res = await t.http().get(url).set(c.auth);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ data: [], meta: { request_id: expect.any(String), page: { limit: 25, next_cursor: null } } });
      }
    });

    it.each([1, 4, 7, 31])('walks a subreddit with next_cursor visiting every post exactly once (limit %i)', async (limit) => {
      const rows = await seed(31);
      const c = await t.customer('business');
      const ids = await walk(`/v1/subreddits/${rows[0].subreddit}/posts`, c.auth, limit);
      expect(ids).toEqual(rows.map((r) => r.id));
    });

    it('walks a user\'s posts across subreddits, and only theirs', async () => {
      const author = uniqueName('U');
      const mine = [...(await seed(9, { author })), ...(await seed(8, { author }))].sort(newestFirst);
      await seed(5, { author: uniqueName('other') });
      const c = await t.customer('pro');
      const ids = await walk(`/v1/users/${author}/posts`, c.auth, 4);
      expect(ids).toEqual(mine.map((r) => r.id));
    });

    it('treats subreddit and user names case-insensitively, with r/ and u/ prefixes', async () => {
      const sub = uniqueName('Ts');
      const author = uniqueName('Name');
      const rows = await seed(3, { subreddit: sub.toLowerCase(), author });
      const c = await t.customer();
      const want = rows.map((r) => r.id);
      for (const s of [sub, sub.toUpperCase(), sub.toLowerCase(), `r%2F${sub}`]) {
        const res = await t.http().get(`/v1/subreddits/${s}/posts`).set(c.auth);
        expect(res.body.data.map((p: { id: string }) => p.id)).toEqual(want);
      }
      for (const u of [author, author.toUpperCase(), author.toLowerCase(), `u%2F${author}`]) {
        const res = await t.http().get(`/v1/users/${u}/posts`).set(c.auth);
        expect(res.body.data.map((p: { id: string }) => p.id)).toEqual(want);
      }
      // A cursor is bound to the normalised name, so it carries over between spellings.
      const first = await t.http().get(`/v1/subreddits/${sub.toUpperCase()}/posts?limit=1`).set(c.auth);
      const next = await t.http().get(`/v1/subreddits/${sub.toLowerCase()}/posts`).query({ limit: 1, cursor: first.body.meta.page.next_cursor }).set(c.auth);
      expect(next.status).toBe(200);
      expect(next.body.data[0].id).toBe(want[1]);
      const byUser = await t.http().get(`/v1/users/${author.toLowerCase()}/posts?limit=2`).set(c.auth);
      const userNext = await t.http().get(`/v1/users/u%2F${author.toUpperCase()}/posts`).query({ limit: 2, cursor: byUser.body.meta.page.next_cursor }).set(c.auth);
      expect(userNext.body.data.map((p: { id: string }) => p.id)).toEqual([want[2]]);
    });
  });

  describe('plans and limits', () => {
    it.each([
      ['free', 25, '60'],
      ['pro', 50, '300'],
      ['business', 100, '1200'],
      ['enterprise', 100, '6000'],
    ] as const)('lets the %s plan in with max page size %i', async (plan, max, rate) => {
      const rows = await seed(3);
      const c = await t.customer(plan);
      for (const url of [`/v1/subreddits/${rows[0].subreddit}/posts`, `/v1/users/someone/posts`]) {
        const ok = await t.http().get(`${url}?limit=${max}`).set(c.auth);
        expect(ok.status).toBe(200);
        expect(ok.body.meta.page.limit).toBe(max);
        expect(ok.headers['x-ratelimit-limit']).toBe(rate);
        const over = await t.http().get(`${url}?limit=${max + 1}`).set(c.auth);
        expectError(over, 400, 'BAD_REQUEST');
        expect(over.body.error.message).toContain(String(max));
      }
      expect((await t.http().get(`/v1/subreddits/${rows[0].subreddit}/posts`).set(c.auth)).body.meta.page.limit).toBe(25);
    });

    it('answers 400 BAD_REQUEST for a limit that is not a plain positive integer', async () => {
      const c = await t.customer('pro');
      for (const bad of ['0', '-1', '1.5', 'abc', '', '1e1', '5&limit=6']) {
        expectError(await t.http().get(`/v1/subreddits/typescript/posts?limit=${bad}`).set(c.auth), 400, 'BAD_REQUEST');
      }
    });

    it('answers 401 without a valid key', async () => {
      for (const url of ['/v1/subreddits/typescript/posts', '/v1/users/someone/posts']) {
        const res = await t.http().get(url);
        expectError(res, 401, 'UNAUTHORIZED');
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
        expectError(await t.http().get(url).set({ Authorization: 'Bearer th_live_' + 'a'.repeat(38) }), 401, 'UNAUTHORIZED');
      }
    });
  });

  describe('validation', () => {
    it.each(['ab', '_under', 'a'.repeat(22), 'has%20space', 'dash-ed', 'r%2Fab', '%00abc', 'caf%C3%A9s'])('answers 400 VALIDATION_ERROR for the subreddit %j', async (sub) => {
      const c = await t.customer('free');
      const res = await t.http().get(`/v1/subreddits/${sub}/posts`).set(c.auth);
      expectError(res, 400, 'VALIDATION_ERROR');
      expect(res.body.error.message).toContain('subreddit');
    });

    it.each(['ab', 'a'.repeat(21), 'bad.name', 'bad%20name', '%5Bdeleted%5D', 'u%2Fab', 'r%2Fsomeone'])('answers 400 VALIDATION_ERROR for the username %j', async (name) => {
      const c = await t.customer('free');
      const res = await t.http().get(`/v1/users/${name}/posts`).set(c.auth);
      expectError(res, 400, 'VALIDATION_ERROR');
      expect(res.body.error.message).toContain('username');
    });

    it('accepts Reddit user names with hyphens and underscores', async () => {
      const c = await t.customer('free');
      for (const name of ['a-b', 'A_b-C_d', 'x'.repeat(20)]) expect((await t.http().get(`/v1/users/${name}/posts`).set(c.auth)).status).toBe(200);
    });
  });

  describe('cursors', () => {
    it('answers 400 INVALID_CURSOR for a cursor from another route, subreddit, user, customer, tampered or truncated', async () => {
      const author = uniqueName('U');
      const rows = await seed(6, { author });
      const sub = rows[0].subreddit;
      const other = await seed(3, { author: uniqueName('U') });
      const c = await t.customer('business');
      const subCursor: string = (await t.http().get(`/v1/subreddits/${sub}/posts?limit=2`).set(c.auth)).body.meta.page.next_cursor;
      const userCursor: string = (await t.http().get(`/v1/users/${author}/posts?limit=2`).set(c.auth)).body.meta.page.next_cursor;
      expect(subCursor).toEqual(expect.any(String));
      expect(userCursor).toEqual(expect.any(String));

      await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/a', event: 'trends.surge', subreddit: sub }).expect(201);
      await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/b', event: 'trends.surge', subreddit: sub }).expect(201);
      const webhookCursor: string = (await t.http().get('/v1/webhooks?limit=1').set(c.auth)).body.meta.page.next_cursor;
      expect(webhookCursor).toEqual(expect.any(String));

      const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
      const cases: [string, string, string | RegExp][] = [
        [`/v1/users/${author}/posts`, subCursor, 'another route'],
        [`/v1/subreddits/${sub}/posts`, userCursor, 'another route'],
        [`/v1/subreddits/${other[0].subreddit}/posts`, subCursor, 'other route parameters'],
        [`/v1/users/${other[0].author}/posts`, userCursor, 'other route parameters'],
        [`/v1/subreddits/${sub}/posts`, webhookCursor, 'another route'],
        [`/v1/subreddits/${sub}/posts`, flip(subCursor, 10), 'signature'],
        [`/v1/subreddits/${sub}/posts`, flip(subCursor, subCursor.length - 5), /signature|malformed/],
        [`/v1/subreddits/${sub}/posts`, subCursor.slice(0, -3), /signature|malformed/],
        [`/v1/subreddits/${sub}/posts`, subCursor.slice(0, subCursor.indexOf('.')), 'malformed'],
        [`/v1/subreddits/${sub}/posts`, '', 'empty'],
        [`/v1/subreddits/${sub}/posts`, 'x'.repeat(2000), 'too long'],
      ];
      for (const [url, cursor, message] of cases) {
        const res = await t.http().get(url).query({ cursor }).set(c.auth);
        expectError(res, 400, 'INVALID_CURSOR');
        expect(res.body.error.message).toMatch(message);
      }

      const stranger = await t.customer('business');
      const foreign = await t.http().get(`/v1/subreddits/${sub}/posts`).query({ cursor: subCursor }).set(stranger.auth);
      expectError(foreign, 400, 'INVALID_CURSOR');
      expect(foreign.body.error.message).toContain('customer');
      const repeated = await t.http().get(`/v1/subreddits/${sub}/posts?cursor=${subCursor}&cursor=${subCursor}`).set(c.auth);
      expectError(repeated, 400, 'INVALID_CURSOR');
      // The genuine cursor still works.
      expect((await t.http().get(`/v1/subreddits/${sub}/posts`).query({ limit: 2, cursor: subCursor }).set(c.auth)).status).toBe(200);
    });

    it('answers 400 INVALID_CURSOR for a genuinely signed cursor whose position is not [created_at, id]', async () => {
      const rows = await seed(3);
      const c = await t.customer('pro');
      const codec = new CursorCodec(CursorKeyRing.fromSecrets(t.config.cursor.secrets), { ttlSeconds: 60 });
      const params = { subreddit: rows[0].subreddit };
      for (const position of [['x'], [1.5, 'a'], ['a', 'b'], [BASE_MS, 'a', 'b']]) {
        const cursor = codec.encode({ route: POSTS_SUBREDDIT_ROUTE, customerId: c.customerId, params, position, direction: 'next' }, new Date());
        const res = await t.http().get(`/v1/subreddits/${rows[0].subreddit}/posts`).query({ cursor }).set(c.auth);
        expectError(res, 400, 'INVALID_CURSOR');
      }
      // The same codec with a well-formed position is accepted: the refusal above is about the shape.
      const good = codec.encode({ route: POSTS_SUBREDDIT_ROUTE, customerId: c.customerId, params, position: [rows[0].createdAt.getTime(), rows[0].id], direction: 'next' }, new Date());
      const res = await t.http().get(`/v1/subreddits/${rows[0].subreddit}/posts`).query({ cursor: good }).set(c.auth);
      expect(res.body.data.map((p: { id: string }) => p.id)).toEqual(rows.slice(1).map((r) => r.id));
    });

    it('does not repeat or skip posts that exist for the whole walk when others arrive meanwhile', async () => {
      const rows = await seed(20);
      const sub = rows[0].subreddit;
      const c = await t.customer('pro');
      const newest = rows[0].createdAt.getTime();
      const added: string[] = [];
      const ids = await walk(`/v1/subreddits/${sub}/posts`, c.auth, 5, async (page) => {
        // Newer than everything (never reached by this walk), and some amid the unseen rows,
        // including ties with the anchor's timestamp.
        const fresh = [
          makePost({ subreddit: sub, createdAt: new Date(newest + 1000 * (page + 1)) }),
          makePost({ subreddit: sub, createdAt: rows[(page + 1) * 5 - 1].createdAt }),
          makePost({ subreddit: sub, createdAt: new Date(rows[rows.length - 1].createdAt.getTime() + 1) }),
        ];
        added.push(...fresh.map((f) => f.id));
        await repo.upsertMany(fresh);
      });
      expect(new Set(ids).size).toBe(ids.length);
      const original = rows.map((r) => r.id);
      expect(ids.filter((id) => original.includes(id))).toEqual(original);
      expect(ids.every((id) => original.includes(id) || added.includes(id))).toBe(true);
    });

    it('keeps a randomized walk consistent while posts are deleted and inserted between pages', async () => {
      const seed0 = Date.now() >>> 0;
      const rand = mulberry32(seed0); // reproducible from the seed printed on failure
      const sub = uniqueName('rw');
      const at = () => new Date(BASE_MS + Math.floor(rand() * 40) * 1000);
      const initial = Array.from({ length: 80 }, () => makePost({ subreddit: sub, createdAt: at() }));
      await repo.upsertMany(initial);
      const ds = t.app.get<DataSource>(getDataSourceToken());
      const deleted = new Set<string>();
      const all = new Map(initial.map((p) => [p.id, p]));
      const limit = 1 + Math.floor(rand() * 9);
      const c = await t.customer('business');

      const ids = await walk(`/v1/subreddits/${sub}/posts`, c.auth, limit, async () => {
        const victims = [...all.keys()].filter((id) => !deleted.has(id) && rand() < 0.03);
        if (victims.length) await ds.getRepository(PostEntity).delete(victims);
        victims.forEach((v) => deleted.add(v));
        const fresh = Array.from({ length: Math.floor(rand() * 4) }, () => makePost({ subreddit: sub, createdAt: at() }));
        await repo.upsertMany(fresh);
        fresh.forEach((f) => all.set(f.id, f));
      });

      const context = `seed ${seed0}, limit ${limit}`;
      expect({ context, repeats: ids.length - new Set(ids).size }).toEqual({ context, repeats: 0 });
      const stable = initial.filter((p) => !deleted.has(p.id)).map((p) => p.id);
      expect({ context, missing: stable.filter((id) => !ids.includes(id)) }).toEqual({ context, missing: [] });
      const seen = ids.map((id) => all.get(id)!);
      for (let i = 1; i < seen.length; i++) expect({ context, order: newestFirst(seen[i - 1], seen[i]) < 0 }).toEqual({ context, order: true });
    });
  });

  describe('query plans', () => {
    it('pages with one index range scan on both scopes, never a sort', async () => {
      const ds = t.app.get<DataSource>(getDataSourceToken());
      await seed(30, { subreddit: uniqueName('plan') });
      for (const [scope, index] of [['subreddit', 'idx_posts_subreddit_created'], ['author_key', 'idx_posts_author_created']] as const) {
        for (const req of [{ limit: 100, after: [BASE_MS + 5000, 'zzz'] }, { limit: 100, before: [BASE_MS + 5000, 'aaa'] }]) {
          const [sql, params] = repo.pageQuery(scope, 'x', req).getQueryAndParameters();
          let plan: string;
          if (dialectOf(ds) === 'sqlite') {
            const rows: { detail: string }[] = await ds.query(`EXPLAIN QUERY PLAN ${sql}`, params);
            plan = rows.map((r) => r.detail).join('\n');
            expect(plan).toMatch(new RegExp(`USING (COVERING )?INDEX ${index} \\(${scope}=\\? AND created_at[<>]`));
            expect(plan).not.toMatch(/TEMP B-TREE|MULTI-INDEX/);
          } else {
            const qr = ds.createQueryRunner();
            try {
              await qr.startTransaction();
              // A test table is tiny, so the planner would rightly prefer a sequential scan.
              await qr.query('SET LOCAL enable_seqscan = off');
              const rows: { 'QUERY PLAN': string }[] = await qr.query(`EXPLAIN ${sql}`, params);
              plan = rows.map((r) => r['QUERY PLAN']).join('\n');
            } finally {
              await qr.rollbackTransaction();
              await qr.release();
            }
            expect(plan).toMatch(new RegExp(`Index Scan.* using ${index}`));
            expect(plan).toMatch(/Index Cond: .*created_at [<>]=/);
            expect(plan).not.toMatch(/Sort/);
          }
        }
      }
    });
  });

  describe('ingest', () => {
    it('stores a file through IngestService and refreshes known posts on a second run', async () => {
      const sub = uniqueName('in');
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-ingest-e2e-'));
      try {
        const ids = [newPostId(), newPostId(), newPostId()];
        const line = (id: string, score: number, i: number) =>
          JSON.stringify({ kind: 't3', data: { id, name: `t3_${id}`, subreddit: sub.toUpperCase(), author: 'Poster_9', title: `T${i}`, score, num_comments: i, created_utc: 1_700_000_000 + i, permalink: `/r/${sub}/comments/${id}/x/` } });
        const file = path.join(dir, 'posts.ndjson');
        fs.writeFileSync(file, ids.map((id, i) => line(id, 1, i)).join('\n') + '\n{"oops"\n');
        const ingest = t.app.get(IngestService);
        expect(await ingest.ingestFile(file)).toMatchObject({ format: 'ndjson', read: 4, inserted: 3, updated: 0, skipped: 1, errors: [{ at: 'line 4' }], subreddits: { [sub]: 3 } });

        fs.writeFileSync(file, line(ids[0], 99, 0));
        expect(await ingest.ingestFile(file)).toMatchObject({ read: 1, inserted: 0, updated: 1 });

        const c = await t.customer('free');
        const res = await t.http().get(`/v1/users/poster_9/posts`).set(c.auth);
        const mine = res.body.data.filter((p: { subreddit: string }) => p.subreddit === sub);
        expect(mine.map((p: { id: string }) => p.id)).toEqual([...ids].reverse());
        expect(mine[2]).toMatchObject({ score: 99, author: 'Poster_9', created_at: new Date(1_700_000_000_000).toISOString(), permalink: `https://www.reddit.com/r/${sub}/comments/${ids[0]}/x/` });
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});

describe('trendhooks ingest (CLI, SQLite)', () => {
  const exec = promisify(execFile);
  const cli = path.resolve(__dirname, '../dist/cli.js');
  let dir: string;
  beforeAll(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-cli-ingest-'))));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function ingest(file: string): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await exec(process.execPath, [cli, 'ingest', '--file', file, '--json'], {
        env: { ...process.env, DATABASE_URL: `sqlite:${path.join(dir, 'cli.db')}` },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  it('prints a JSON summary whose counts match, with the bad line reported', async () => {
    const file = path.join(dir, 'posts.ndjson');
    const post = (id: string, sub: string) => JSON.stringify({ id, subreddit: sub, title: 't', author: 'x_y', created_utc: 1_700_000_000, score: 3, num_comments: 1 });
    fs.writeFileSync(file, [post('aa1', 'TypeScript'), post('aa2', 'typescript'), 'not json at all', post('aa3', 'node'), ''].join('\r\n'));
    const first = await ingest(file);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({
      file,
      format: 'ndjson',
      read: 4,
      inserted: 3,
      updated: 0,
      skipped: 1,
      errors: [{ at: 'line 3', reason: expect.stringContaining('not valid JSON') }],
      subreddits: { typescript: 2, node: 1 },
      duration_ms: expect.any(Number),
    });
    const again = await ingest(file);
    expect(JSON.parse(again.stdout)).toMatchObject({ read: 4, inserted: 0, updated: 3, skipped: 1 });
  });

  it('exits non-zero for a missing file and for a file with nothing valid', async () => {
    const missing = await ingest(path.join(dir, 'nope.ndjson'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('does not exist');
    const bad = path.join(dir, 'bad.ndjson');
    fs.writeFileSync(bad, '{"id":"x"}\n{"id":"y"}\n');
    const res = await ingest(bad);
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stdout)).toMatchObject({ read: 2, skipped: 2, inserted: 0, updated: 0 });
  });
});
