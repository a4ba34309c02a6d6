import { backoffDelay, RateLimiter } from './rate-limit';

/** A clock that only moves when something sleeps. */
function fakeTime(start = 1_000_000) {
  const t = { now: start, slept: [] as number[] };
  return {
    t,
    rt: {
      now: () => t.now,
      sleep: async (ms: number) => {
        t.slept.push(ms);
        t.now += ms;
      },
    },
  };
}

/** A clock that moves only when told: sleepers wake in order of their wake-up time. */
function steppedTime(start = 1_000_000) {
  let now = start;
  const sleepers: { at: number; wake: () => void }[] = [];
  return {
    rt: {
      now: () => now,
      sleep: (ms: number) => new Promise<void>((wake) => sleepers.push({ at: now + ms, wake })),
    },
    /** Moves the clock to the next sleeper's time and wakes every sleeper due by then. */
    async step(): Promise<void> {
      if (sleepers.length === 0) return;
      now = Math.min(...sleepers.map((s) => s.at));
      for (const s of sleepers.filter((x) => x.at <= now)) {
        sleepers.splice(sleepers.indexOf(s), 1);
        s.wake();
      }
      for (let i = 0; i < 10; i++) await Promise.resolve();
    },
  };
}

describe('RateLimiter', () => {
  it("starts a listing's next page before requests that waited longer", async () => {
    const time = steppedTime();
    // 6 a minute: a pace of one request every 11.1 s once the burst is spent.
    const l = new RateLimiter(time.rt, { perMinute: 6, backoffBaseMs: 1000, backoffMaxMs: 60_000 });
    await l.acquire();
    const order: string[] = [];
    const first = l.acquire().then(() => order.push('first page of another subreddit'));
    await Promise.resolve();
    const next = l.acquire(undefined, true).then(() => order.push('next page'));
    for (let i = 0; i < 20 && order.length < 2; i++) await time.step();
    await Promise.all([first, next]);
    expect(order).toEqual(['next page', 'first page of another subreddit']);
  });

  it('lets requests through at once while the budget is unknown or left', async () => {
    const { t, rt } = fakeTime();
    const l = new RateLimiter(rt);
    await l.acquire();
    l.update({ 'x-ratelimit-remaining': '5.0', 'x-ratelimit-reset': '60' }, t.now, 600_000);
    await l.acquire();
    await l.acquire();
    expect(t.slept).toEqual([]);
  });

  it('waits until the reset once X-Ratelimit-Remaining is below 1', async () => {
    const { t, rt } = fakeTime();
    const l = new RateLimiter(rt);
    l.update({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' }, t.now, 600_000);
    await l.acquire();
    expect(t.slept).toEqual([1000]);
    // The window reset: the budget is unknown again until the next response says otherwise.
    await l.acquire();
    expect(t.slept).toEqual([1000]);
  });

  it('counts its own requests between responses, so parallel callers cannot overdraw the budget', async () => {
    const { t, rt } = fakeTime();
    const l = new RateLimiter(rt);
    l.update({ 'x-ratelimit-remaining': '2', 'x-ratelimit-reset': '30' }, t.now, 600_000);
    await l.acquire();
    await l.acquire();
    expect(t.slept).toEqual([]);
    await l.acquire();
    expect(t.slept).toEqual([30_000]);
  });

  it('treats fractional remaining figures as Reddit sends them ("0.4" is spent)', async () => {
    const { t, rt } = fakeTime();
    const l = new RateLimiter(rt);
    l.update({ 'x-ratelimit-remaining': '0.4', 'x-ratelimit-reset': '12' }, t.now, 600_000);
    expect(l.waitMs(t.now)).toBe(12_000);
  });

  it('ignores missing or malformed headers', async () => {
    const { t, rt } = fakeTime();
    const l = new RateLimiter(rt);
    l.update({ 'x-ratelimit-remaining': 'lots', 'x-ratelimit-reset': '5' }, t.now, 600_000);
    l.update({ 'x-ratelimit-remaining': '0' }, t.now, 600_000);
    l.update({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '-3' }, t.now, 600_000);
    await l.acquire();
    expect(t.slept).toEqual([]);
  });

  it('caps the wait a reset header can impose', () => {
    const { t, rt } = fakeTime();
    const l = new RateLimiter(rt);
    l.update({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '86400' }, t.now, 600_000);
    expect(l.waitMs(t.now)).toBe(600_000);
  });

  it('blocks every request until a 429 block ends, however much budget is left', async () => {
    const { t, rt } = fakeTime();
    const l = new RateLimiter(rt);
    l.update({ 'x-ratelimit-remaining': '50', 'x-ratelimit-reset': '60' }, t.now, 600_000);
    l.block(t.now + 7000);
    l.block(t.now + 2000); // an earlier end never shortens a block
    await l.acquire();
    expect(t.slept).toEqual([7000]);
  });

  it('stops waiting when the caller aborts', async () => {
    const l = new RateLimiter({ now: () => 0, sleep: (_ms, signal) => new Promise((_r, reject) => signal?.addEventListener('abort', () => reject(signal.reason))) });
    l.block(60_000);
    const ac = new AbortController();
    const p = l.acquire(ac.signal);
    ac.abort();
    await expect(p).rejects.toBeDefined();
  });
});

describe('RateLimiter pacing and client-wide backoff', () => {
  const opts = { perMinute: 100, backoffBaseMs: 1000, backoffMaxMs: 60_000 };

  it('paces requests at 90 % of the quota after a burst of 5, so no 10 minutes hold more than the quota', async () => {
    const { t, rt } = fakeTime();
    const l = new RateLimiter(rt, opts);
    const start = t.now;
    let n = 0;
    while (t.now - start < 10 * 60_000) {
      await l.acquire();
      n++;
    }
    // 5 at once, then one every 60 000 / 90 ms.
    expect(t.slept.slice(0, 2)).toEqual([expect.closeTo(666.7, 0), expect.closeTo(666.7, 0)]);
    expect(n).toBeLessThanOrEqual(5 + 900 + 1);
    expect(n).toBeLessThanOrEqual(1000);
  });

  it('backs off for the whole client after a failure, lets one probe through at a time, and a success ends it', async () => {
    const { t, rt } = fakeTime();
    const l = new RateLimiter(rt, opts);
    // Three requests in flight when Reddit goes down: they fail together and count once.
    const inFlight = [await l.acquire(), await l.acquire(), await l.acquire()];
    for (const ticket of inFlight) l.failed(ticket, () => 0.5);
    expect(l.waitMs(t.now)).toBe(750); // ¾ of the 1 s base
    // Two callers wait: the first is the probe, the second waits for its outcome.
    const probe = await l.acquire();
    expect(probe.probe).toBe(true);
    let second: { probe: boolean } | undefined;
    const waiting = l.acquire().then((x) => (second = x));
    await new Promise((r) => setImmediate(r));
    expect(second).toBeUndefined();
    l.failed(probe, () => 0.5); // still down: the next step doubles
    await waiting;
    expect(second!.probe).toBe(true);
    expect(t.slept.at(-1)).toBe(1500);
    l.succeeded(second as never);
    expect(l.failing).toBe(false);
    expect((await l.acquire()).probe).toBe(false);
  });
});

describe('backoffDelay', () => {
  it('doubles per retry, with half of each delay random', () => {
    expect([0, 1, 2, 3].map((r) => backoffDelay(r, 1000, 60_000, () => 0))).toEqual([500, 1000, 2000, 4000]);
    expect([0, 1, 2, 3].map((r) => backoffDelay(r, 1000, 60_000, () => 0.999999))).toEqual([1000, 2000, 4000, 8000].map((n) => expect.closeTo(n, 0)));
  });

  it('never exceeds the cap, at any retry', () => {
    for (const retry of [6, 10, 50, 2000]) {
      const d = backoffDelay(retry, 1000, 60_000, () => 0.999999);
      expect(d).toBeLessThanOrEqual(60_000);
      expect(d).toBeGreaterThanOrEqual(30_000);
    }
  });
});
