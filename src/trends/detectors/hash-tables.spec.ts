import { BucketCounter, copyString, KeywordTable } from './hash-tables';
import { keywordOf, scanSpans, spanHash } from './tokenizer';

/** Feeds one bucket's posts (id, text) to `counter` the way observeVelocityPosts does; keyword → posts containing it. */
function count(counter: BucketCounter, posts: [string, string][]): Map<string, number> {
  counter.reset();
  let kept = 0;
  for (const [id, text] of posts) {
    if (counter.seenPost(id)) continue;
    counter.post = kept++;
    scanSpans(text, counter);
  }
  return new Map(counter.keys.map((k, i) => [k, counter.counts[i]]));
}

describe('BucketCounter', () => {
  it('counts each keyword once per post, after stemming, and skips stopwords', () => {
    const counts = count(new BucketCounter(), [
      ['a', 'Eclipse eclipse ECLIPSE tonight'],
      ['b', 'the eclipses and the moon'],
    ]);
    expect(counts.get(keywordOf('eclipse', spanHash('eclipse'))!)).toBe(2);
    expect(counts.get('tonight')).toBe(1);
    expect(counts.has('the')).toBe(false);
  });

  it('skips a post id it already saw in the bucket', () => {
    const counts = count(new BucketCounter(), [
      ['a', 'volcano'],
      ['a', 'volcano'],
    ]);
    expect(counts.get('volcano')).toBe(1);
  });

  it('forgets the previous bucket on reset, post ids included', () => {
    const counter = new BucketCounter();
    count(counter, [['a', 'volcano erupts']]);
    const second = count(counter, [['a', 'quake']]);
    expect([...second]).toEqual([['quake', 1]]);
  });

  it('keeps counting right as its tables grow past their first size', () => {
    const words = Array.from({ length: 5000 }, (_, i) => `gw${i.toString(36)}z`);
    const counts = count(new BucketCounter(), [
      ['a', words.join(' ')],
      ['b', words.slice(0, 2500).join(' ')],
    ]);
    expect(counts.size).toBe(5000);
    expect(counts.get(words[0])).toBe(2);
    expect(counts.get(words[4999])).toBe(1);
  });

  it('shares nothing between two instances', () => {
    const a = new BucketCounter();
    const b = new BucketCounter();
    a.reset();
    b.reset();
    scanSpans('volcano', a);
    expect(b.keys).toEqual([]);
    expect(b.seenPost('x')).toBe(false);
    expect(a.seenPost('x')).toBe(false);
  });
});

describe('KeywordTable', () => {
  const admit = (t: KeywordTable, k: string, count = 2) => t.admit(k, spanHash(k), count);

  it('finds an admitted keyword by its hash and keeps its share and update time', () => {
    const t = new KeywordTable(100);
    const slot = admit(t, 'eclipse');
    t.set(slot, 0.25, 7);
    expect(t.slot('eclipse', spanHash('eclipse'))).toBe(slot);
    expect([t.share(slot), t.updatedAt(slot)]).toEqual([0.25, 7]);
    expect(t.has('moon')).toBe(false);
    expect(t.size).toBe(1);
  });

  it('grows past its first size without losing a keyword', () => {
    const t = new KeywordTable(10_000);
    for (let i = 0; i < 1000; i++) t.set(admit(t, `k${i}`), i, 0);
    for (let i = 0; i < 1000; i++) expect(t.share(t.slot(`k${i}`, spanHash(`k${i}`)))).toBe(i);
  });

  it('near the cap admits a one-post keyword only on its second sighting', () => {
    const t = new KeywordTable(10);
    for (let i = 0; i < 8; i++) admit(t, `k${i}`);
    expect(admit(t, 'once', 1)).toBe(-1);
    expect(admit(t, 'once', 1)).toBeGreaterThanOrEqual(0);
    expect(admit(t, 'busy', 2)).toBeGreaterThanOrEqual(0);
  });

  it('prunes the lowest decayed weights down to 80% of the cap, and finds the survivors', () => {
    const t = new KeywordTable(10);
    for (let i = 0; i < 10; i++) t.set(admit(t, `k${i}`), (i + 1) / 100, 0);
    t.prune(1, 0.5);
    expect(t.size).toBe(8);
    expect(t.has('k0') || t.has('k1')).toBe(false);
    for (let i = 2; i < 10; i++) expect(t.has(`k${i}`)).toBe(true);
    expect([...t.entries(1, 0.5)].map(([k]) => k).sort()).toEqual(['k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9']);
  });
});

describe('copyString', () => {
  it('returns an equal string', () => {
    const long = 'x'.repeat(1000);
    expect(copyString(long.slice(10, 20))).toBe('x'.repeat(10));
  });
});
