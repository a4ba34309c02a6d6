/**
 * Where an attempt goes, for the per-destination share and the circuit breaker: the URL's host and port as written
 * (the URL was validated at create: https, no userinfo). A string slice, not `new URL()`: it runs
 * once per delivery on the hot path.
 */
export function destinationOf(url: string): string {
  const start = url.indexOf('//') + 2;
  let end = url.length;
  for (const c of ['/', '?', '#']) {
    const i = url.indexOf(c, start);
    if (i !== -1 && i < end) end = i;
  }
  return url.slice(start, end).toLowerCase();
}
