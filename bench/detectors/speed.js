'use strict';
/**
 * Throughput and memory of the detectors.
 *
 *   node --expose-gc bench/detectors/speed.js [--dist=/tmp/det-dist] [--posts=500000] [--runs=5]
 *
 * Throughput: pre-generated posts (titles from a Zipf vocabulary plus English filler, 20% with a
 * self-text) across 100 subreddits are pushed through all three detectors the way the service would:
 * per subreddit and 30-minute bucket, six observeSurgeBucket calls (5-minute counts), one
 * observeVelocityPosts call with the bucket's posts, and two observeRising calls per post (first
 * sighting + one re-read). Reported: posts/s, median of `runs` runs, each on fresh state, and the
 * same as a RATIO to a baseline measured in the same run just before it: a plain loop over the same
 * posts that only buckets them (5- and 30-minute buckets, per subreddit, reading each title), the
 * least any pipeline does. Absolute posts/s move with the machine and its load; the ratio says how
 * many times the cost of merely bucketing the posts the detectors take, and means the same anywhere.
 *
 * Memory: heap after GC while feeding many subreddits with ever-new keywords and posts; it must
 * level off (bounded state), not grow with the amount fed.
 */
const L = require('./lib');

const argv = process.argv.slice(2);
const det = L.loadDetectors(argv);
const TOTAL_POSTS = Number(L.flag(argv, 'posts', '500000'));
const RUNS = Number(L.flag(argv, 'runs', '5'));
const SUBS = 100;
const VBUCKET = 30 * L.MINUTE;
const SBUCKET = 5 * L.MINUTE;

function generate(seed) {
  const rng = L.rngFrom(seed);
  const vocab = L.makeVocabulary(30000, det.ENGLISH_STOPWORDS, seed);
  const zipf = vocab.map((_, r) => 1 / (r + 1));
  const draw = L.aliasTable(zipf);
  const filler = ['the', 'and', 'for', 'what', 'this', 'with', 'have', 'just', 'is', 'a', 'to', 'of', 'in', "don't", 'my'];
  const sentence = (len) => {
    const parts = new Array(len);
    for (let k = 0; k < len; k++) parts[k] = rng() < 0.3 ? filler[Math.floor(rng() * filler.length)] : vocab[draw(rng)];
    // Capitalise like real titles so lower-casing is exercised.
    parts[0] = parts[0][0].toUpperCase() + parts[0].slice(1);
    return parts.join(' ');
  };
  // Subreddit sizes are Zipf too: a few busy ones carry most posts.
  const weights = Array.from({ length: SUBS }, (_, i) => 1 / (i + 1));
  const wsum = weights.reduce((a, b) => a + b, 0);
  const start = Date.UTC(2024, 0, 1);
  const subs = [];
  let id = 0;
  for (let s = 0; s < SUBS; s++) {
    const n = Math.max(50, Math.round((TOTAL_POSTS * weights[s]) / wsum));
    const days = 7;
    const nBuckets = (days * L.DAY) / VBUCKET;
    const buckets = Array.from({ length: nBuckets }, () => []);
    for (let i = 0; i < n; i++) {
      const created = start + Math.floor(rng() * days * L.DAY);
      const pid = (id++).toString(36);
      const post = {
        id: pid,
        title: sentence(5 + Math.floor(rng() * 10)),
        selftext: rng() < 0.2 ? sentence(30) : undefined,
        permalink: `/r/s${s}/comments/${pid}/`,
        created,
        score: Math.floor(Math.exp(3 * rng())),
        comments: Math.floor(Math.exp(2 * rng())),
      };
      buckets[Math.floor((created - start) / VBUCKET)].push(post);
    }
    for (const b of buckets) b.sort((a, c) => a.created - c.created);
    subs.push({ name: `s${s}`, buckets, start });
  }
  return subs;
}

/** The baseline: the same posts, the same loop structure, only bucketed (counts and title lengths). */
function bucketOnly(subs, passes) {
  let posts = 0;
  let sink = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let pass = 0; pass < passes; pass++) for (const sub of subs) {
    for (let b = 0; b < sub.buckets.length; b++) {
      const bucketStart = sub.start + b * VBUCKET;
      const bucket = sub.buckets[b];
      const counts = [0, 0, 0, 0, 0, 0];
      let chars = 0;
      for (const p of bucket) {
        counts[Math.floor((p.created - bucketStart) / SBUCKET)]++;
        chars += p.title.length;
      }
      sink += counts[0] + counts[5] + chars;
      posts += bucket.length;
    }
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  if (sink < 0) console.log(sink); // keeps the loop from being optimised away
  return { posts, seconds, postsPerSecond: posts / seconds, postsPerCpuSecond: posts / ((cpu.user + cpu.system) / 1e6) };
}

function runOnce(subs) {
  let posts = 0;
  let events = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (const sub of subs) {
    const surge = det.createSurgeState();
    const velocity = det.createVelocityState();
    const rising = det.createRisingState();
    for (let b = 0; b < sub.buckets.length; b++) {
      const bucketStart = sub.start + b * VBUCKET;
      const bucket = sub.buckets[b];
      const counts = [0, 0, 0, 0, 0, 0];
      for (const p of bucket) counts[Math.floor((p.created - bucketStart) / SBUCKET)]++;
      for (let k = 0; k < 6; k++) if (det.observeSurgeBucket(surge, bucketStart + k * SBUCKET, counts[k])) events++;
      events += det.observeVelocityPosts(velocity, bucketStart, bucket).length;
      for (const p of bucket) {
        const obs = { postId: p.id, createdUtcMs: p.created, observedAtMs: p.created + 5 * L.MINUTE, score: 1, numComments: 0, permalink: p.permalink, title: p.title };
        if (det.observeRising(rising, obs)) events++;
        if (det.observeRising(rising, { ...obs, observedAtMs: p.created + 20 * L.MINUTE, score: p.score, numComments: p.comments })) events++;
      }
      posts += bucket.length;
    }
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  return { posts, seconds, cpuSeconds, postsPerSecond: posts / seconds, postsPerCpuSecond: posts / cpuSeconds, events };
}

function heapMb() {
  if (global.gc) {
    global.gc();
    global.gc();
  }
  return process.memoryUsage().heapUsed / 1048576;
}

/**
 * Many subreddits, each fed far more distinct keywords and posts than its caps: every post carries
 * a never-seen-before word and a fresh id, so unbounded state would grow linearly with `rounds`.
 */
function memory() {
  const SUBREDDITS = 200;
  const rng = L.rngFrom(99);
  const vocab = L.makeVocabulary(5000, det.ENGLISH_STOPWORDS, 5);
  const states = [];
  for (let s = 0; s < SUBREDDITS; s++) states.push({ surge: det.createSurgeState(), velocity: det.createVelocityState(), rising: det.createRisingState() });
  const start = Date.UTC(2024, 0, 1);
  let fresh = 0;
  let postsFed = 0;
  const samples = [];
  const base = heapMb();
  const ROUNDS = 192;
  for (let round = 0; round < ROUNDS; round++) {
    const bucketStart = start + round * VBUCKET;
    for (let s = 0; s < SUBREDDITS; s++) {
      const st = states[s];
      // 1 in 10 subreddits is busy (60 posts per bucket), the rest quiet (6).
      const n = s % 10 === 0 ? 60 : 6;
      const posts = [];
      for (let i = 0; i < n; i++) {
        const words = [];
        for (let k = 0; k < 6; k++) words.push(vocab[Math.floor(rng() * vocab.length)]);
        words.push(`qz${(fresh++).toString(36)}a`, `qz${(fresh++).toString(36)}a`);
        const id = `p${(postsFed++).toString(36)}`;
        posts.push({ id, title: words.join(' '), permalink: `/r/x/comments/${id}/` });
      }
      for (let k = 0; k < 6; k++) det.observeSurgeBucket(st.surge, bucketStart + k * SBUCKET, Math.round(n / 6));
      det.observeVelocityPosts(st.velocity, bucketStart, posts);
      for (const p of posts) {
        // Rising: posts created now, observed twice; they age out after 12 h (24 rounds of 30 min).
        det.observeRising(st.rising, { postId: p.id, createdUtcMs: bucketStart, observedAtMs: bucketStart + 60_000, score: 1, numComments: 0, permalink: p.permalink, title: p.title });
        det.observeRising(st.rising, { postId: p.id, createdUtcMs: bucketStart, observedAtMs: bucketStart + 25 * 60_000, score: 3, numComments: 1, permalink: p.permalink, title: p.title });
      }
    }
    if (round % 24 === 23) {
      let keywords = 0;
      let tracked = 0;
      for (const st of states) {
        keywords += st.velocity.keywords.size;
        tracked += st.rising.posts.size + st.rising.fired.size;
      }
      samples.push({ round: round + 1, postsFed, distinctKeywordsFed: fresh, keywordsHeld: keywords, postsHeld: tracked, heapMb: L.round(heapMb() - base, 1) });
    }
  }
  return { subreddits: SUBREDDITS, samples };
}

function main() {
  const subs = generate(1);
  const results = [];
  // Warm the baseline's code once so its first measured run is not an interpreter run.
  bucketOnly(subs, 1);
  for (let r = 0; r < RUNS; r++) {
    // 20 passes (≈ as long as one detector run at a ratio of 0.05), so a scheduler hiccup does not dominate it.
    const base = bucketOnly(subs, 20);
    const res = runOnce(subs);
    res.baselinePerSecond = base.postsPerSecond;
    res.baselinePerCpuSecond = base.postsPerCpuSecond;
    // Per CPU-second on both sides: on a shared machine wall time counts other jobs' time too.
    res.ratio = res.postsPerCpuSecond / base.postsPerCpuSecond;
    results.push(res);
    console.log(
      `run ${r + 1}: ${res.posts} posts in ${res.seconds.toFixed(3)} s wall (${res.cpuSeconds.toFixed(3)} s CPU) = ` +
        `${Math.round(res.postsPerSecond)} posts/s (${Math.round(res.postsPerCpuSecond)} per CPU-second), ${res.events} events; ` +
        `bucketing only ${Math.round(base.postsPerCpuSecond)} per CPU-second, ratio ${res.ratio.toFixed(4)}`,
    );
  }
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(
    `median of ${RUNS} runs: ratio ${median(results.map((r) => r.ratio)).toFixed(4)} of a loop that only buckets the same posts ` +
      `(${Math.round(median(results.map((r) => r.postsPerCpuSecond)))} vs ${Math.round(median(results.map((r) => r.baselinePerCpuSecond)))} posts per CPU-second; ` +
      `${Math.round(median(results.map((r) => r.postsPerSecond)))} posts/s wall; ` +
      `surge + velocity + rising, 2 rising observations per post; load average ${require('node:os').loadavg()[0].toFixed(2)})`,
  );
  if (!global.gc) console.log('(run with node --expose-gc for the memory part)');
  else {
    const m = memory();
    console.log(`\nheap growth (MB above start, after GC) feeding ${m.subreddits} subreddits with ever-new keywords and post ids:`);
    console.table(m.samples);
  }
}

main();
