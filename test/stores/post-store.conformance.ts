import { PostEntity } from '../../src/posts/post.entity';
import type { PostStore } from '../../src/posts/post.store';
import { StoreFixture, uniqueName } from './store-fixture';

const BASE_MS = Date.UTC(2024, 0, 1);
let seq = 0;
// Fixed-length lower-case ids order the same under every collation the databases may use.
const newPostId = () => `${process.pid.toString(36)}${(seq++).toString(36).padStart(8, '0')}`;

function post(subreddit: string, createdMs: number, over: Partial<PostEntity> = {}): PostEntity {
  const id = over.id ?? newPostId();
  const author = over.author ?? 'Someone';
  return {
    id, subreddit, author, authorKey: author.toLowerCase(), title: `title ${id}`, selftext: '', url: `https://example.com/${id}`,
    permalink: `/r/${subreddit}/comments/${id}/t/`, score: 1, numComments: 0, createdAt: new Date(createdMs),
    firstSeenAt: new Date(BASE_MS), updatedAt: new Date(BASE_MS), ...over,
  };
}

const newestFirst = (a: PostEntity, b: PostEntity) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1);

/** What every PostStore implementation must do, whatever its database. */
export function postStoreConformance(f: StoreFixture<PostStore>): void {
  it('inserts new posts and reports them as new; a later sighting refreshes only the mutable fields', async () => {
    const sub = uniqueName('ins');
    const first = [post(sub, BASE_MS), post(sub, BASE_MS + 1000)];
    expect([...(await f.store.upsertMany(first)).insertedIds].sort()).toEqual(first.map((p) => p.id).sort());
    const later = new Date(BASE_MS + 60_000);
    const seen = { ...first[0], subreddit: 'elsewhere', author: 'Other', createdAt: new Date(0), score: 50, numComments: 7, title: 'edited', selftext: 'more', updatedAt: later };
    const again = await f.store.upsertMany([seen, post(sub, BASE_MS + 2000)]);
    expect(again.insertedIds.has(first[0].id)).toBe(false);
    expect(again.insertedIds.size).toBe(1);
    const [row] = await f.ds.getRepository(PostEntity).findBy({ id: first[0].id });
    expect(row).toMatchObject({ subreddit: sub, author: 'Someone', createdAt: new Date(BASE_MS), score: 50, numComments: 7, title: 'edited', selftext: 'more', updatedAt: later });
  });

  it("reads a subreddit's history oldest first, created from a time, whenever it was seen", async () => {
    const sub = uniqueName('hist');
    const seen = (ms: number) => ({ firstSeenAt: new Date(BASE_MS + ms) });
    const tooOld = post(sub, BASE_MS - 1, seen(0));
    const a = post(sub, BASE_MS + 2000, seen(0));
    const b = post(sub, BASE_MS, seen(500));
    const seenLate = post(sub, BASE_MS + 1000, seen(10_000));
    await f.store.upsertMany([tooOld, a, b, seenLate, post(uniqueName('other'), BASE_MS + 10, seen(0))]);
    const got = await f.store.history(sub, new Date(BASE_MS));
    expect(got.map((p) => p.id)).toEqual([b.id, seenLate.id, a.id]);
    expect(got[2]).toEqual(a);
  });

  it('lets the later of two sightings in one batch win, and stores batches beyond one statement', async () => {
    const sub = uniqueName('dup');
    const p = post(sub, BASE_MS);
    const many = Array.from({ length: 1100 }, (_, i) => post(sub, BASE_MS + i));
    const res = await f.store.upsertMany([p, ...many, { ...p, score: 99 }]);
    expect(res.insertedIds.size).toBe(1101);
    expect(await f.ds.getRepository(PostEntity).countBy({ subreddit: sub })).toBe(1101);
    expect((await f.ds.getRepository(PostEntity).findOneByOrFail({ id: p.id })).score).toBe(99);
  });

  it('pages one subreddit newest first by (created_at, id), limit + 1 rows, after and before a position', async () => {
    const sub = uniqueName('page');
    // created_at repeats in threes so the id breaks ties.
    const rows = Array.from({ length: 10 }, (_, i) => post(sub, BASE_MS + Math.floor(i / 3) * 1000));
    await f.store.upsertMany([...rows, post(uniqueName('other'), BASE_MS + 5000)]);
    const all = [...rows].sort(newestFirst).map((p) => p.id);
    const ids = (ps: { id: string }[]) => ps.map((p) => p.id);
    expect(ids(await f.store.pageBySubreddit(sub, { limit: 4 }))).toEqual(all.slice(0, 5));
    const at = (i: number): [number, string] => {
      const p = rows.find((r) => r.id === all[i])!;
      return [p.createdAt.getTime(), p.id];
    };
    expect(ids(await f.store.pageBySubreddit(sub, { limit: 3, after: at(3) }))).toEqual(all.slice(4, 8));
    // `before` reads upwards: the nearest newer rows first.
    expect(ids(await f.store.pageBySubreddit(sub, { limit: 2, before: at(5) }))).toEqual([all[4], all[3], all[2]]);
    expect(await f.store.pageBySubreddit(sub, { limit: 3, after: at(9) })).toEqual([]);
  });

  it('pages one author across subreddits, by the lower-cased author key', async () => {
    const author = `Author${uniqueName('', 12)}`;
    const mine = [post(uniqueName('a'), BASE_MS, { author }), post(uniqueName('b'), BASE_MS + 1000, { author })];
    await f.store.upsertMany([...mine, post(mine[0].subreddit, BASE_MS + 2000)]);
    const page = await f.store.pageByAuthor(author.toLowerCase(), { limit: 10 });
    expect(page.map((p) => p.id)).toEqual([mine[1].id, mine[0].id]);
    expect(page[0]).toMatchObject({ author, subreddit: mine[1].subreddit, createdAt: new Date(BASE_MS + 1000) });
  });

  it('reads a page row back as written, every field a post answer shows (no more), on both scopes and in every direction', async () => {
    const author = `Full${uniqueName('', 12)}`;
    const sub = uniqueName('full');
    const full = post(sub, BASE_MS + 3_000_000_123, {
      author, title: 'A "title" with ünïcode', selftext: 'body\nlines', score: 2_000_000_000, numComments: 12345,
      firstSeenAt: new Date(BASE_MS + 7), updatedAt: new Date(BASE_MS + 3_000_000_999),
    });
    const older = post(sub, BASE_MS, { author });
    await f.store.upsertMany([full, older]);
    // The author key and the bookkeeping times are never answered: a page does not read them.
    const listed = ({ authorKey: _k, firstSeenAt: _f, updatedAt: _u, ...item }: PostEntity) => item;
    expect(await f.store.pageBySubreddit(sub, { limit: 5 })).toEqual([listed(full), listed(older)]);
    expect(await f.store.pageByAuthor(author.toLowerCase(), { limit: 1 })).toEqual([listed(full), listed(older)]);
    expect(await f.store.pageBySubreddit(sub, { limit: 1, after: [full.createdAt.getTime(), full.id] })).toEqual([listed(older)]);
    expect(await f.store.pageByAuthor(author.toLowerCase(), { limit: 1, before: [older.createdAt.getTime(), older.id] })).toEqual([listed(full)]);
  });

  it('pages again after its data source is closed and opened again (a reconnect), with rows written meanwhile', async () => {
    const sub = uniqueName('reopen');
    const first = post(sub, BASE_MS);
    await f.store.upsertMany([first]);
    expect((await f.store.pageBySubreddit(sub, { limit: 5 })).map((p) => p.id)).toEqual([first.id]);
    await f.ds.destroy();
    await f.ds.initialize();
    const second = post(sub, BASE_MS + 1);
    await f.store.upsertMany([second]);
    expect((await f.store.pageBySubreddit(sub, { limit: 5 })).map((p) => p.id)).toEqual([second.id, first.id]);
  });

  it('purges posts by id, anonymises authors by id, and deletes posts created before a time, oldest first and bounded', async () => {
    const sub = uniqueName('gone');
    const [a, b, c] = [post(sub, BASE_MS), post(sub, BASE_MS + 1), post(sub, BASE_MS + 2, { author: 'Named' })];
    await f.store.upsertMany([a, b, c]);
    // What a purge is about to delete, as stored (the pipeline forgets them).
    expect((await f.store.findByIds([a.id, c.id, 'nosuchpost'])).map((p) => p.id).sort()).toEqual([a.id, c.id].sort());
    expect(await f.store.findByIds([])).toEqual([]);
    expect(await f.store.purge([a.id, 'nosuchpost'])).toBe(1);
    expect(await f.store.anonymise([c.id])).toBe(1);
    expect(await f.store.anonymise([c.id])).toBe(0);
    const rows = await f.ds.getRepository(PostEntity).find({ where: { subreddit: sub }, order: { id: 'ASC' } });
    expect(rows.map((r) => [r.id, r.author, r.authorKey])).toEqual([
      [b.id, 'Someone', 'someone'],
      [c.id, '[deleted]', '[deleted]'],
    ]);

    // Older than anything else the suite stores: 2001.
    const old = Date.UTC(2001, 0, 1);
    const olds = [post(sub, old), post(sub, old + 1), post(sub, old + 2)];
    await f.store.upsertMany(olds);
    expect(await f.store.purgeCreatedBefore(old + 3, 2)).toBe(2);
    expect((await f.ds.getRepository(PostEntity).findOneBy({ id: olds[2].id }))?.id).toBe(olds[2].id);
    expect(await f.store.purgeCreatedBefore(old + 3, 2)).toBe(1);
    expect(await f.store.purgeCreatedBefore(old + 3, 2)).toBe(0);
    expect(await f.ds.getRepository(PostEntity).countBy({ subreddit: sub })).toBe(2);
  });
  it('picks the posts worth re-reading: recent enough, not seen lately, newest first, at most `limit`', async () => {
    const sub = uniqueName('reread');
    const at = (createdAt: number, updatedAt: number, subreddit = sub) => post(subreddit, BASE_MS + createdAt, { updatedAt: new Date(BASE_MS + updatedAt) });
    const old = at(-10, 0); // created before the window
    const fresh = at(100, 600); // seen too recently
    const [a, b, c, d] = [at(100, 100), at(200, 200), at(200, 300), at(300, 300)];
    const elsewhere = at(300, 300, uniqueName('other'));
    await f.store.upsertMany([old, fresh, a, b, c, d, elsewhere]);
    // Equal creation times (b, c) go by id, newest first like the pages.
    const [first, second] = [b, c].sort(newestFirst);
    const T = BASE_MS;
    expect(await f.store.rereadCandidates([sub], T, T + 500, 10)).toEqual([d.id, first.id, second.id, a.id]);
    expect(await f.store.rereadCandidates([sub], T, T + 500, 2)).toEqual([d.id, first.id]);
    // A group's posts, newest first across its subreddits.
    expect(await f.store.rereadCandidates([sub, 'nosuchsub'], T, T + 500, 3)).toEqual([d.id, first.id, second.id]);
    expect(await f.store.rereadCandidates([elsewhere.subreddit, sub], T, T + 500, 2)).toEqual([d, elsewhere].sort(newestFirst).map((p) => p.id));
  });

  it('counts posts per subreddit since a time, with the oldest and newest; a subreddit without any is absent', async () => {
    const [sub, other] = [uniqueName('count'), uniqueName('count')];
    await f.store.upsertMany([post(sub, BASE_MS - 1), post(sub, BASE_MS + 100), post(sub, BASE_MS + 200), post(sub, BASE_MS + 300), post(other, BASE_MS + 300)]);
    const counts = await f.store.countsSince([sub, other, 'nosuchsub'], BASE_MS + 100);
    expect(counts.get(sub)).toEqual({ n: 3, oldest: BASE_MS + 100, newest: BASE_MS + 300 });
    expect(counts.get(other)).toEqual({ n: 1, oldest: BASE_MS + 300, newest: BASE_MS + 300 });
    expect(counts.has('nosuchsub')).toBe(false);
  });
}
