import type { PollOutcome, TrendSourceLeaseStore } from '../../src/trends/reddit/trend-source-lease.store';
import { StoreFixture, uniqueName } from './store-fixture';

const T0 = Date.UTC(2025, 0, 1);
const LEASE = 60_000;
const ok = (nextPollAt: number): PollOutcome => ({ ok: true, nextPollAt, lastError: null, consecutiveFailures: 0 });

/** What every TrendSourceLeaseStore implementation must do, whatever its database. */
export function trendSourceLeaseStoreConformance(f: StoreFixture<TrendSourceLeaseStore>): void {
  /** A claim at `now` with a lease of LEASE and strangers allowed from `strangerFrom` (default: `now`, i.e. no grace). */
  const claim = (sub: string, owner: string, now: number, strangerFrom = now) => f.store.claim(sub, owner, now, now + LEASE, strangerFrom);

  it('leases a subreddit seen for the first time, and refuses it to another owner while held', async () => {
    const sub = uniqueName('lease');
    expect(await claim(sub, 'a', T0)).toEqual({ claimed: true, consecutiveFailures: 0, lastError: null, lastPolledAt: null });
    expect(await claim(sub, 'b', T0 + 1000)).toEqual({ claimed: false, state: { leaseOwner: 'a', leaseUntil: T0 + LEASE, nextPollAt: null } });
  });

  it('renews only for the holder', async () => {
    const sub = uniqueName('renew');
    await claim(sub, 'a', T0);
    expect(await f.store.renew(sub, 'a', T0 + 2 * LEASE, T0 + 1000)).toBe(true);
    expect(await f.store.renew(sub, 'b', T0 + 2 * LEASE, T0 + 1000)).toBe(false);
    expect(await claim(sub, 'b', T0 + LEASE + 1)).toMatchObject({ claimed: false, state: { leaseOwner: 'a', leaseUntil: T0 + 2 * LEASE } });
  });

  it('lets another owner take an expired lease over; the old holder can then neither renew nor finish', async () => {
    const sub = uniqueName('steal');
    await claim(sub, 'a', T0);
    expect(await claim(sub, 'b', T0 + LEASE + 1)).toMatchObject({ claimed: true });
    expect(await f.store.renew(sub, 'a', T0 + 3 * LEASE, T0 + LEASE + 2)).toBe(false);
    expect(await f.store.finish(sub, 'a', ok(T0 + 10 * LEASE), T0 + LEASE + 2)).toBe(false);
    expect(await f.store.finish(sub, 'b', ok(T0 + 2 * LEASE), T0 + LEASE + 2)).toBe(true);
  });

  it('finishing releases the lease until the next poll is due; the last poller keeps it for the stranger grace', async () => {
    const sub = uniqueName('finish');
    await claim(sub, 'a', T0);
    const next = T0 + 5000;
    expect(await f.store.finish(sub, 'a', ok(next), T0 + 1000)).toBe(true);
    expect(await claim(sub, 'a', next - 1)).toEqual({ claimed: false, state: { leaseOwner: 'a', leaseUntil: null, nextPollAt: next } });
    // Due, but a stranger only once its grace has passed (strangerFrom at or after next_poll_at).
    expect(await claim(sub, 'b', next, next - 1)).toMatchObject({ claimed: false });
    expect(await claim(sub, 'a', next)).toMatchObject({ claimed: true });
    await f.store.finish(sub, 'a', ok(next + 5000), next + 1);
    expect(await claim(sub, 'b', next + 5000, next + 5000)).toMatchObject({ claimed: true });
  });

  it('remembers a failed poll and tells the next claimer, and a good poll clears it', async () => {
    const sub = uniqueName('fail');
    await claim(sub, 'a', T0);
    await f.store.finish(sub, 'a', { ok: false, nextPollAt: T0 + 1000, lastError: 'http_503', consecutiveFailures: 3 }, T0 + 10);
    expect(await claim(sub, 'a', T0 + 1000)).toEqual({ claimed: true, consecutiveFailures: 3, lastError: 'http_503', lastPolledAt: null });
    await f.store.finish(sub, 'a', ok(T0 + 2000), T0 + 1010);
    // Without a listing start, the end of the poll stands for it.
    expect(await claim(sub, 'a', T0 + 2000)).toEqual({ claimed: true, consecutiveFailures: 0, lastError: null, lastPolledAt: T0 + 1010 });
  });

  it("releasing all of an owner's leases lets anyone take them at once, and leaves others' alone", async () => {
    const [mine, theirs] = [uniqueName('rel'), uniqueName('rel')];
    await claim(mine, 'a', T0);
    await claim(theirs, 'c', T0);
    await f.store.releaseAll('a', T0 + 1);
    expect(await claim(mine, 'b', T0 + 2)).toMatchObject({ claimed: true });
    expect(await claim(theirs, 'b', T0 + 2)).toMatchObject({ claimed: false, state: { leaseOwner: 'c' } });
  });

  it('gives a subreddit to exactly one of many owners racing for it', async () => {
    for (let round = 0; round < 5; round++) {
      const sub = uniqueName('race');
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => claim(sub, `owner-${i}`, T0)));
      expect(results.filter((r) => r.claimed)).toHaveLength(1);
    }
  });

  it('records when the last successful listing started, hands it to the next claim, and tells it apart from a subreddit never polled', async () => {
    const [sub, never] = [uniqueName('mark'), uniqueName('never')];
    await claim(sub, 'a', T0);
    await claim(never, 'a', T0);
    expect(await f.store.finish(sub, 'a', { ...ok(T0 + 1000), listedAt: T0 + 5 }, T0 + 900)).toBe(true);
    expect(await claim(sub, 'a', T0 + 1000)).toEqual({ claimed: true, consecutiveFailures: 0, lastError: null, lastPolledAt: T0 + 5 });
    const sources = await f.store.sources([sub, never]);
    expect(sources.get(sub)?.lastPolledAt).toBe(T0 + 5);
    expect(sources.get(never)?.lastPolledAt).toBeNull();
  });
}
