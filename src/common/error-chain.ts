/**
 * The error and everything it wraps — `cause`, AggregateError `errors`, TypeORM's `driverError` —
 * breadth first, cycle-safe and bounded: the one walker the database-unavailable classifier (HTTP
 * exception filter and CLI) and the delivery classifier use to look beneath a wrapper.
 */
export function* errorChain(err: unknown, limit = 32): Generator<Record<string, unknown>> {
  const queue: unknown[] = [err];
  const seen = new Set<unknown>();
  while (queue.length > 0 && seen.size < limit) {
    const e = queue.shift();
    if (e === null || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    const rec = e as Record<string, unknown>;
    yield rec;
    if ('cause' in rec) queue.push(rec.cause);
    if ('driverError' in rec) queue.push(rec.driverError);
    if (Array.isArray(rec.errors)) queue.push(...rec.errors);
  }
}
