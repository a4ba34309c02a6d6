import { createHash } from 'node:crypto';
import type { Detection } from '../events/catalogue';
import { SubredditTrends } from '../trends/subreddit-trends';
import { DemoDataset, generateDemoDataset } from './dataset';

/** The dataset through the production detectors with their default parameters, as the pipeline feeds them. */
function detect(ds: DemoDataset): Detection[] {
  const st = new SubredditTrends(ds.subreddit);
  const seen = new Set<string>();
  const out: Detection[] = [];
  for (const round of ds.rounds) {
    const fresh = new Set(round.posts.filter((p) => !seen.has(p.id)).map((p) => p.id));
    for (const id of fresh) seen.add(id);
    const posts = [...round.posts]
      .sort((a, b) => a.createdAtMs - b.createdAtMs || (a.id < b.id ? -1 : 1))
      .map((p) => ({ id: p.id, createdAtMs: p.createdAtMs, title: p.title, selftext: p.selftext, permalink: p.permalink, score: p.score, numComments: p.numComments }));
    out.push(...st.observe(posts, fresh, round.atMs), ...st.advance());
  }
  return out;
}

describe('demo dataset', () => {
  it('is the same every time', () => {
    const a = generateDemoDataset();
    const b = generateDemoDataset();
    expect(b).toEqual(a);
    // Pins the bytes: a change to the generator (or to the PRNG's platform behaviour) shows up here
    // and in the demo's printed figures, so update this only on purpose.
    expect(createHash('sha256').update(JSON.stringify(a)).digest('hex')).toBe('e7e7fd5f2503d2453ac7c7d43ce18dd17259770b31c15cd4b5fa5f0e80367a76');
  });

  it('renames, but does not reshape, for another subreddit and id prefix', () => {
    const a = generateDemoDataset();
    const b = generateDemoDataset({ subreddit: 'demo_abc123', idPrefix: 'dabc123' });
    expect(b.rounds.length).toBe(a.rounds.length);
    expect(b.observationCount).toBe(a.observationCount);
    expect(b.rounds[50].posts.map((p) => [p.title, p.score, p.createdAtMs])).toEqual(a.rounds[50].posts.map((p) => [p.title, p.score, p.createdAtMs]));
    expect(b.rounds[50].posts.every((p) => p.subreddit === 'demo_abc123' && p.id.startsWith('dabc123') && p.permalink.startsWith('/r/demo_abc123/'))).toBe(true);
    expect(() => generateDemoDataset({ idPrefix: 'Bad-Prefix' })).toThrow(RangeError);
  });

  it('is shaped like a poller sees a subreddit: event-time order, re-reads at least the rising gap apart', () => {
    const ds = generateDemoDataset();
    expect(ds.endMs - ds.startMs).toBeGreaterThanOrEqual(24 * 3600_000);
    expect(ds.endMs - ds.startMs).toBeLessThanOrEqual(48 * 3600_000);
    for (let i = 1; i < ds.rounds.length; i++) expect(ds.rounds[i].atMs - ds.rounds[i - 1].atMs).toBeGreaterThanOrEqual(10 * 60_000);
    for (const r of ds.rounds) for (const p of r.posts) expect(p.createdAtMs <= r.atMs && p.firstSeenAtMs <= r.atMs).toBe(true);
    const ids = new Set(ds.rounds.flatMap((r) => r.posts.map((p) => p.id)));
    expect(ids.size).toBe(ds.postCount);
  });

  it('triggers exactly one surge, one keyword spike and one rising post with the default detector parameters', () => {
    const ds = generateDemoDataset();
    const found = detect(ds);
    expect(found.map((d) => d.kind).sort()).toEqual(['trends.rising', 'trends.surge', 'trends.velocity']);
    const h = ds.highlights;
    const surge = found.find((d) => d.kind === 'trends.surge')!;
    // The surge fires on a bucket of the surge (its evidence window reaches back before it).
    expect(surge.kind === 'trends.surge' && surge.bucketEnd > h.surge.startMs && surge.bucketEnd <= h.surge.endMs).toBe(true);
    const velocity = found.find((d) => d.kind === 'trends.velocity')!;
    // A story: its first post in the spike, reported before the spike is over.
    const k = h.keywordSpike;
    expect(velocity.kind === 'trends.velocity' && velocity.keyword === k.keyword && velocity.firstPostAt >= k.startMs && velocity.bucketEnd <= k.endMs).toBe(true);
    const rising = found.find((d) => d.kind === 'trends.rising')!;
    expect(rising.kind === 'trends.rising' && rising.postId).toBe(h.risingPost.id);
  });
});
