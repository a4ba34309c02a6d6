import { GroupBatcher } from './group-batcher';

const tick = () => new Promise((r) => setImmediate(r));

describe('GroupBatcher', () => {
  it('runs what is pushed in one turn as one batch, answering each caller in order', async () => {
    const calls: number[][] = [];
    const b = new GroupBatcher<number, number>((xs) => {
      calls.push(xs);
      return xs.map((x) => x * 10);
    });
    await expect(Promise.all([b.push(1), b.push(2), b.push(3)])).resolves.toEqual([10, 20, 30]);
    expect(calls).toEqual([[1, 2, 3]]);
  });

  it('queues what arrives during a run for the next run, never running two at once', async () => {
    const calls: number[][] = [];
    let running = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const b = new GroupBatcher<number, number>(async (xs) => {
      expect(++running).toBe(1);
      calls.push(xs);
      if (calls.length === 1) await gate;
      running--;
      return xs;
    });
    const first = b.push(1);
    await tick(); // the first run has started and waits on the gate
    const later = [b.push(2), b.push(3)];
    await tick();
    expect(calls).toEqual([[1]]);
    expect(b.waiting).toBe(2);
    release();
    await expect(Promise.all([first, ...later])).resolves.toEqual([1, 2, 3]);
    expect(calls).toEqual([[1], [2, 3]]);
  });

  it("with flush 'microtasks', runs what the current callback and its promise chains push as one batch, before the loop's next turn", async () => {
    const calls: number[][] = [];
    const b = new GroupBatcher<number, number>((xs) => (calls.push(xs), xs), { flush: 'microtasks' });
    let turned = false;
    setImmediate(() => (turned = true));
    // Pushes at different promise depths, as attempts started together reach their checks.
    const chain = (x: number, depth: number): Promise<number> => (depth === 0 ? b.push(x) : Promise.resolve().then(() => chain(x, depth - 1)));
    await expect(Promise.all([chain(1, 0), chain(2, 3), chain(3, 1)])).resolves.toEqual([1, 2, 3]);
    expect(calls).toEqual([[1, 3, 2]]);
    expect(turned).toBe(false);
  });

  it('by default runs a batch only after the turn of the loop it was pushed in', async () => {
    const b = new GroupBatcher<number, number>((xs) => xs);
    let turned = false;
    setImmediate(() => (turned = true));
    await b.push(1);
    expect(turned).toBe(true);
  });

  it('with gather, holds a small batch until it has enough items, or until maxWaitMs passed', async () => {
    const calls: number[][] = [];
    let enough = 3;
    const b = new GroupBatcher<number, number>((xs) => (calls.push(xs), xs), { gather: { enough: () => enough, maxWaitMs: 50 } });
    const first = [b.push(1), b.push(2)];
    await tick();
    await tick();
    expect(calls).toEqual([]); // 2 < 3: held
    const third = b.push(3); // enough: runs at once, without the timer
    await expect(Promise.all([...first, third])).resolves.toEqual([1, 2, 3]);
    expect(calls).toEqual([[1, 2, 3]]);
    const t = performance.now();
    await expect(b.push(4)).resolves.toBe(4); // never enough: runs when the wait ends
    expect(performance.now() - t).toBeGreaterThanOrEqual(45);
    enough = 1;
    const t2 = performance.now();
    await expect(b.push(5)).resolves.toBe(5); // enough at once: no hold
    expect(performance.now() - t2).toBeLessThan(45);
    expect(calls).toEqual([[1, 2, 3], [4], [5]]);
  });

  it('splits at maxBatch', async () => {
    const sizes: number[] = [];
    const b = new GroupBatcher<number, number>((xs) => (sizes.push(xs.length), xs), { maxBatch: 2 });
    await Promise.all([1, 2, 3, 4, 5].map((x) => b.push(x)));
    expect(sizes).toEqual([2, 2, 1]);
  });

  it('rejects every item of a failed batch and still runs the next one', async () => {
    let n = 0;
    const b = new GroupBatcher<string, string>((xs) => {
      if (n++ === 0) throw new Error('database down');
      return xs;
    });
    const failed = [b.push('a'), b.push('b')];
    await expect(failed[0]).rejects.toThrow('database down');
    await expect(failed[1]).rejects.toThrow('database down');
    await expect(b.push('c')).resolves.toBe('c');
  });

  it('rejects a run that answers the wrong number of results', async () => {
    const b = new GroupBatcher<number, number>(() => [1]);
    await expect(Promise.all([b.push(1), b.push(2)])).rejects.toThrow('batch of 2 answered 1 results');
  });
});
