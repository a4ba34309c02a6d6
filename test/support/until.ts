import { sleep } from './receiver';

/**
 * Calls `fn` every 50 ms until `pred` accepts its value, and returns it; throws after `timeoutMs`
 * naming `what` and the last value (the suites against the fake Reddit wait on stored state so).
 */
export async function until<T>(fn: () => Promise<T> | T, pred: (v: T) => boolean, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (pred(v)) return v;
    if (Date.now() > end) throw new Error(`${what} not met in ${timeoutMs} ms: ${JSON.stringify(v).slice(0, 400)}`);
    await sleep(50);
  }
}
