import type { TrendhooksPrincipal } from '../auth/principal';
import { PlanService } from '../auth/plan.service';
import { CursorCodec, CursorKeyRing } from '../pagination/cursor-codec';
import type { CursorKeys } from '../pagination/cursor-keys';
import type { PageRequest } from '../pagination/page';
import { PaginationService } from '../pagination/pagination.service';
import type { PostEntity } from './post.entity';
import { PostStore } from './post.store';
import { POSTS_SUBREDDIT_ROUTE, POSTS_USER_ROUTE, PostsService } from './posts.service';

const NOW = new Date(Date.UTC(2025, 0, 1));
const RING = CursorKeyRing.fromSecrets(['unit-test-cursor-secret-unit-test']);

/** In-memory PostStore: the page contract the conformance suite checks on the real databases. */
class FakePostStore extends PostStore {
  posts: PostEntity[] = [];
  asked: string[] = [];

  async pageBySubreddit(subreddit: string, req: PageRequest) {
    this.asked.push(`subreddit ${subreddit}`);
    return this.page(this.posts.filter((p) => p.subreddit === subreddit), req);
  }
  async pageByAuthor(authorKey: string, req: PageRequest) {
    this.asked.push(`author ${authorKey}`);
    return this.page(this.posts.filter((p) => p.authorKey === authorKey), req);
  }
  pageQuery(): never {
    throw new Error('the fake store has no SQL');
  }
  async upsertMany(): Promise<never> {
    throw new Error('not used by PostsService');
  }
  async findByIds(): Promise<never> {
    throw new Error('not used by PostsService');
  }
  async purge(): Promise<never> {
    throw new Error('not used by PostsService');
  }
  async anonymise(): Promise<never> {
    throw new Error('not used by PostsService');
  }
  async purgeCreatedBefore(): Promise<never> {
    throw new Error('not used by PostsService');
  }
  async history(): Promise<never> {
    throw new Error('not used here');
  }
  async rereadCandidates(): Promise<never> {
    throw new Error('not used by PostsService');
  }
  async countsSince(): Promise<never> {
    throw new Error('not used by PostsService');
  }
  private page(rows: PostEntity[], req: PageRequest) {
    const key = (p: PostEntity): [number, string] => [p.createdAt.getTime(), p.id];
    const cmp = (a: [number, string], b: [number, string]) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
    const anchor = (req.before ?? req.after) as [number, string] | undefined;
    const sign = req.before ? 1 : -1;
    return rows
      .filter((p) => !anchor || sign * cmp(key(p), anchor) > 0)
      .sort((a, b) => sign * cmp(key(a), key(b)))
      .slice(0, req.limit + 1);
  }
}

function post(id: string, subreddit: string, author: string, createdMs: number): PostEntity {
  return {
    id, subreddit, author, authorKey: author.toLowerCase(), title: id, selftext: '', url: '', permalink: '', score: 1, numComments: 0,
    createdAt: new Date(createdMs), firstSeenAt: new Date(createdMs), updatedAt: new Date(createdMs),
  };
}

describe('PostsService', () => {
  const caller: TrendhooksPrincipal = { tenantId: 'cus_alice', plan: 'free' };
  let store: FakePostStore;
  let service: PostsService;

  beforeEach(() => {
    store = new FakePostStore();
    const keys = { get: async () => RING } as unknown as CursorKeys;
    service = new PostsService(store, new PlanService({}), new PaginationService(keys, { now: () => NOW }, {}));
  });

  it('refuses a malformed subreddit or username with VALIDATION_ERROR before reading anything', async () => {
    for (const bad of ['ab', '_underscore', 'has space', 'x'.repeat(22), 'r/']) {
      await expect(service.listBySubreddit(caller, bad, {})).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    }
    for (const bad of ['ab', 'dots.not.allowed', 'y'.repeat(21)]) {
      await expect(service.listByUser(caller, bad, {})).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    }
    expect(store.asked).toEqual([]);
  });

  it('reads the normalised name: without the r/ or u/ prefix, lower case', async () => {
    await service.listBySubreddit(caller, 'r/TypeScript', {});
    await service.listByUser(caller, '/u/Some_One', {});
    expect(store.asked).toEqual(['subreddit typescript', 'author some_one']);
  });

  it('pages newest first with a next cursor only, and the next page continues where the first stopped', async () => {
    store.posts = Array.from({ length: 5 }, (_, i) => post(`p${i}`, 'node', 'Ann', NOW.getTime() - Math.floor(i / 2) * 1000));
    const first = await service.listBySubreddit(caller, 'node', { limit: '2' });
    expect(first.items.map((p) => p.id)).toEqual(['p1', 'p0']);
    expect(first.page).toEqual({ limit: 2, next_cursor: expect.any(String) });
    const second = await service.listBySubreddit(caller, 'node', { limit: '2', cursor: first.page.next_cursor! });
    expect(second.items.map((p) => p.id)).toEqual(['p3', 'p2']);
    const last = await service.listBySubreddit(caller, 'node', { limit: '2', cursor: second.page.next_cursor! });
    expect(last.items.map((p) => p.id)).toEqual(['p4']);
    expect(last.page.next_cursor).toBeNull();
  });

  it("caps the page size at the caller's plan", async () => {
    await expect(service.listBySubreddit(caller, 'node', { limit: '26' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(service.listBySubreddit({ ...caller, plan: 'business' }, 'node', { limit: '100' })).resolves.toBeDefined();
  });

  it("answers INVALID_CURSOR for another route's, another subreddit's, or a wrongly shaped cursor", async () => {
    const codec = new CursorCodec(RING, { ttlSeconds: 3600 });
    const cursor = (route: string, params: Record<string, string>, position: (string | number)[]) =>
      codec.encode({ route, customerId: caller.tenantId, params, position, direction: 'next' }, NOW);
    const good = cursor(POSTS_SUBREDDIT_ROUTE, { subreddit: 'node' }, [NOW.getTime(), 'p0']);
    await expect(service.listBySubreddit(caller, 'node', { cursor: good })).resolves.toBeDefined();
    await expect(service.listBySubreddit(caller, 'deno', { cursor: good })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    await expect(service.listByUser(caller, 'node', { cursor: cursor(POSTS_SUBREDDIT_ROUTE, { username: 'node' }, [NOW.getTime(), 'p0']) })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    await expect(service.listByUser(caller, 'ann', { cursor: cursor(POSTS_USER_ROUTE, { username: 'ann' }, ['p0']) })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    expect(store.asked).toEqual(['subreddit node']);
  });
});
