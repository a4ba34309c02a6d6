import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Global, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { CLOCK } from '../common/clock';
import { INGEST_BATCH, INGEST_LISTENER, IngestFileError, IngestListener, IngestProgress, IngestService, MAX_REPORTED_ERRORS, PROGRESS_EVERY } from './ingest.service';
import type { PostEntity } from './post.entity';
import { PostStore } from './post.store';
import { parsePost, RedditPost } from './reddit-parse';

/** In-memory stand-in for the store: same contract as PostStore.upsertMany. */
class MemoryPosts {
  readonly rows = new Map<string, PostEntity>();
  calls: number[] = [];
  async upsertMany(posts: readonly PostEntity[]): Promise<{ insertedIds: Set<string> }> {
    this.calls.push(posts.length);
    const insertedIds = new Set<string>();
    for (const p of posts) {
      if (!this.rows.has(p.id)) insertedIds.add(p.id);
      this.rows.set(p.id, { ...(this.rows.get(p.id) ?? p), score: p.score, numComments: p.numComments, title: p.title, selftext: p.selftext, updatedAt: p.updatedAt });
    }
    return { insertedIds };
  }
  async findByIds(ids: readonly string[]): Promise<PostEntity[]> {
    return ids.flatMap((id) => (this.rows.has(id) ? [this.rows.get(id)!] : []));
  }
  async purge(ids: readonly string[]): Promise<number> {
    return ids.filter((id) => this.rows.delete(id)).length;
  }
}

const NOW = new Date('2024-05-01T00:00:00.000Z');
const post = (id: string, over: Record<string, unknown> = {}) => ({ id, subreddit: 'Node', title: `t ${id}`, created_utc: 1_700_000_000, ...over });
const parsed = (id: string): RedditPost => {
  const r = parsePost(post(id));
  if (!r.ok) throw new Error(r.reason);
  return r.value;
};
const listing = (children: unknown[]) => ({ kind: 'Listing', data: { children: children.map((data) => ({ kind: 't3', data })) } });

describe('IngestService', () => {
  let dir: string;
  let store: MemoryPosts;
  let seen: { ids: string[]; inserted: string[] }[];
  let service: IngestService;

  const file = (name: string, content: string | Buffer) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, content);
    return p;
  };

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-ingest-'));
    store = new MemoryPosts();
    seen = [];
    const listener: IngestListener = {
      onPostsUpserted: (posts, info) => {
        seen.push({ ids: posts.map((p) => p.id), inserted: [...info.insertedIds] });
      },
    };
    service = new IngestService(store as unknown as PostStore, { now: () => NOW }, listener);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('deletes posts removed on Reddit and tells the listener which, as they were stored', async () => {
    const removed: string[][] = [];
    const svc = new IngestService(store as unknown as PostStore, { now: () => NOW }, {
      onPostsUpserted: () => undefined,
      onPostsRemoved: (posts) => void removed.push(posts.map((p) => `${p.id}:${p.title}`)),
    });
    await svc.upsertPosts([parsed('a1'), parsed('a2'), parsed('a3')]);
    expect(await svc.removePosts(['a1', 'a3', 'never'])).toBe(2);
    expect(removed).toEqual([['a1:t a1', 'a3:t a3']]);
    expect([...store.rows.keys()]).toEqual(['a2']);
    // Nothing stored among them: nothing to tell.
    expect(await svc.removePosts(['never'])).toBe(0);
    expect(removed).toHaveLength(1);
  });

  it('ingests NDJSON, counts inserts and updates, reports bad lines and counts per subreddit', async () => {
    const lines = [post('a1'), post('a2', { subreddit: 'r/Deno' }), 'garbage', post('a1', { score: 9 }), { kind: 't1', data: {} }].map((l) => (typeof l === 'string' ? l : JSON.stringify(l)));
    const s = await service.ingestFile(file('p.ndjson', lines.join('\n')));
    expect(s).toEqual({
      file: path.join(dir, 'p.ndjson'),
      format: 'ndjson',
      read: 5,
      inserted: 2,
      updated: 1,
      skipped: 2,
      errors: [
        { at: 'line 3', reason: expect.stringContaining('not valid JSON') },
        { at: 'line 5', reason: expect.stringContaining('not a post') },
      ],
      subreddits: { node: 2, deno: 1 },
      duration_ms: expect.any(Number),
    });
    expect(store.rows.get('a1')).toMatchObject({ score: 9, firstSeenAt: NOW, updatedAt: NOW, authorKey: '[deleted]' });
    expect(store.rows.get('a2')?.subreddit).toBe('deno');
  });

  it('counts subreddits whose names are also Object.prototype properties', async () => {
    const text = [post('g1', { subreddit: 'constructor' }), post('g2', { subreddit: 'Constructor' }), post('g3', { subreddit: 'valueOf' })].map((l) => JSON.stringify(l)).join('\n');
    const s = await service.ingestFile(file('proto.ndjson', text));
    expect(JSON.parse(JSON.stringify(s.subreddits))).toEqual({ constructor: 2, valueof: 1 });
  });

  it('stores in batches and tells the listener about each, with the ids that were new', async () => {
    const n = INGEST_BATCH * 2 + 3;
    const text = Array.from({ length: n }, (_, i) => JSON.stringify(post(`p${i}`))).join('\n');
    fs.writeFileSync(path.join(dir, 'old.ndjson'), JSON.stringify(post('p0')));
    await service.ingestFile(path.join(dir, 'old.ndjson'));
    seen = [];
    store.calls = [];
    const s = await service.ingestFile(file('many.ndjson', text));
    expect(s).toMatchObject({ read: n, inserted: n - 1, updated: 1, skipped: 0 });
    expect(store.calls).toEqual([INGEST_BATCH, INGEST_BATCH, 3]);
    expect(seen.map((b) => b.ids.length)).toEqual([INGEST_BATCH, INGEST_BATCH, 3]);
    expect(seen[0].inserted).toHaveLength(INGEST_BATCH - 1);
    expect(seen[0].inserted).not.toContain('p0');
  });

  it('reports progress every PROGRESS_EVERY records, in bytes and records, ending at the whole file', async () => {
    const n = PROGRESS_EVERY * 4 + 7;
    const text = Array.from({ length: n }, (_, i) => JSON.stringify(post(`g${i}`))).join('\n');
    const updates: IngestProgress[] = [];
    const f = file('progress.ndjson', text);
    await service.ingestFile(f, { onProgress: (p) => updates.push(p) });
    expect(updates.length).toBeGreaterThanOrEqual(5);
    expect(updates.at(-1)).toEqual({ bytesRead: Buffer.byteLength(text), totalBytes: Buffer.byteLength(text), records: n });
    for (let i = 1; i < updates.length; i++) {
      expect(updates[i].records).toBeGreaterThan(updates[i - 1].records);
      expect(updates[i].bytesRead).toBeGreaterThanOrEqual(updates[i - 1].bytesRead);
    }
    // A document (not streamed) still ends with one final report.
    const doc: IngestProgress[] = [];
    await service.ingestFile(file('doc.json', JSON.stringify(listing([post('d1'), post('d2')]))), { onProgress: (p) => doc.push(p) });
    expect(doc.at(-1)).toMatchObject({ records: 2 });
  });

  it('reports only the first errors but counts every skipped record', async () => {
    const text = Array.from({ length: 50 }, (_, i) => `{"bad": ${i}}`).join('\n') + '\n' + JSON.stringify(post('ok1'));
    const s = await service.ingestFile(file('bad.ndjson', text));
    expect(s.skipped).toBe(50);
    expect(s.errors).toHaveLength(MAX_REPORTED_ERRORS);
    expect(s.errors[0].at).toBe('line 1');
    expect(s.inserted).toBe(1);
  });

  it('reads NDJSON with a BOM, CRLF line ends and blank lines', async () => {
    const text = '\uFEFF' + [JSON.stringify(post('b1')), '', JSON.stringify(post('b2')), '   '].join('\r\n') + '\r\n';
    const s = await service.ingestFile(file('crlf.ndjson', text));
    expect(s).toMatchObject({ format: 'ndjson', read: 2, inserted: 2, skipped: 0 });
  });

  it('reads a pretty-printed listing, a minified one, and an array of listings', async () => {
    const pretty = await service.ingestFile(file('l.json', '\uFEFF' + JSON.stringify(listing([post('c1'), post('c2')]), null, 2)));
    expect(pretty).toMatchObject({ format: 'listing', read: 2, inserted: 2 });
    const minified = await service.ingestFile(file('m.json', JSON.stringify(listing([post('c3')])) + '\n'));
    expect(minified).toMatchObject({ format: 'listing', read: 1, inserted: 1 });
    const array = await service.ingestFile(file('a.json', JSON.stringify([listing([post('c4')]), listing([post('c1', { score: 3 }), { id: 'BAD' }])])));
    expect(array).toMatchObject({ format: 'listing-array', read: 3, inserted: 1, updated: 1, skipped: 1, errors: [{ at: '[1].data.children[1]', reason: expect.any(String) }] });
  });

  it('reads NDJSON lines that are whole listings', async () => {
    const text = [JSON.stringify(listing([post('d1'), post('d2')])), JSON.stringify(listing([post('d3')]))].join('\n');
    expect(await service.ingestFile(file('ll.ndjson', text))).toMatchObject({ format: 'ndjson', read: 3, inserted: 3 });
  });

  it('reports a document that is not JSON as one skipped record', async () => {
    const s = await service.ingestFile(file('broken.json', '{\n  "kind": "Listing",\n  "data": '));
    expect(s).toMatchObject({ format: 'listing', read: 1, skipped: 1, inserted: 0, errors: [{ at: 'document', reason: expect.stringContaining('not valid JSON') }] });
  });

  it('returns an empty summary for an empty file', async () => {
    expect(await service.ingestFile(file('empty.ndjson', '\n\n'))).toMatchObject({ format: 'empty', read: 0, inserted: 0 });
  });

  it('refuses a single JSON document above the size cap, and a missing or unreadable file', async () => {
    const big = file('big.json', JSON.stringify(listing([post('e1')]), null, 2));
    await expect(service.ingestFile(big, { maxDocumentBytes: 10 })).rejects.toThrow(/over the 10-byte limit/);
    await expect(service.ingestFile(path.join(dir, 'nope.ndjson'))).rejects.toThrow(IngestFileError);
    await expect(service.ingestFile(dir)).rejects.toThrow(/not a regular file/);
  });

  it('gets its listener from a global provider of INGEST_LISTENER, and works without one', async () => {
    const calls: number[] = [];
    @Global()
    @Module({ providers: [{ provide: INGEST_LISTENER, useValue: { onPostsUpserted: (p: readonly PostEntity[]) => void calls.push(p.length) } }], exports: [INGEST_LISTENER] })
    class ListenerModule {}
    const providers = [IngestService, { provide: PostStore, useValue: store }, { provide: CLOCK, useValue: { now: () => NOW } }];
    const withListener = await Test.createTestingModule({ imports: [ListenerModule], providers }).compile();
    await withListener.get(IngestService).upsertPosts([parsed('h1'), parsed('h2')]);
    expect(calls).toEqual([2]);
    const without = await Test.createTestingModule({ providers }).compile();
    expect(await without.get(IngestService).upsertPosts([parsed('h3')])).toEqual({ inserted: 1, updated: 0 });
    expect(calls).toEqual([2]);
  });

  it('lets a store failure through as itself, not as a read error', async () => {
    store.upsertMany = async () => {
      throw new Error('database is gone');
    };
    await expect(service.ingestFile(file('x.ndjson', JSON.stringify(post('f1'))))).rejects.toThrow('database is gone');
  });
});
