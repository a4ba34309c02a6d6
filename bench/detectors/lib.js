'use strict';
/**
 * Shared pieces of the detector benches: a seeded RNG, samplers, and the synthetic series
 * generators with labelled bursts. Plain JS so the benches run on the compiled detectors.
 */
const path = require('node:path');

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;
/** 2024-01-01 was a Monday. */
const EPOCH = Date.UTC(2024, 0, 1);

/** `--dist=PATH` (default: the build output of `npm run build`). */
function loadDetectors(argv) {
  const arg = argv.find((a) => a.startsWith('--dist='));
  const dir = arg ? path.resolve(arg.slice('--dist='.length)) : path.join(__dirname, '../../dist/trends/detectors');
  return require(dir);
}

function flag(argv, name, fallback) {
  const arg = argv.find((a) => a.startsWith(`--${name}=`));
  return arg ? arg.slice(name.length + 3) : fallback;
}

/** mulberry32: tiny, fast, good enough for simulation, and the same on every machine. */
function rngFrom(seed) {
  let a = seed >>> 0;
  return function rng() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normal(rng) {
  let u = 0;
  while (u === 0) u = rng();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng());
}

function uniform(rng, lo, hi) {
  return lo + (hi - lo) * rng();
}

function pick(rng, arr) {
  return arr[Math.floor(rng() * arr.length)];
}

function lgamma(x) {
  // Lanczos approximation (g = 7), accurate to ~1e-13 for x > 0.
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lgamma(1 - x);
  x -= 1;
  let a = c[0];
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += c[i] / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Exact Poisson sampling: multiplication for small means, PTRS (Hörmann 1993) for large. */
function poisson(rng, lam) {
  if (lam <= 0) return 0;
  if (lam < 12) {
    const L = Math.exp(-lam);
    let k = 0;
    let p = rng();
    while (p > L) {
      k++;
      p *= rng();
    }
    return k;
  }
  const slam = Math.sqrt(lam);
  const loglam = Math.log(lam);
  const b = 0.931 + 2.53 * slam;
  const a = -0.059 + 0.02483 * b;
  const invalpha = 1.1239 + 1.1328 / (b - 3.4);
  const vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    const U = rng() - 0.5;
    const V = rng();
    const us = 0.5 - Math.abs(U);
    const k = Math.floor(((2 * a) / us + b) * U + lam + 0.43);
    if (us >= 0.07 && V <= vr) return k;
    if (k < 0 || (us < 0.013 && V > us)) continue;
    if (Math.log(V) + Math.log(invalpha) - Math.log(a / (us * us) + b) <= -lam + k * loglam - lgamma(k + 1)) return k;
  }
}

/** Marsaglia–Tsang gamma(shape, 1). */
function gamma(rng, shape) {
  if (shape < 1) return gamma(rng, shape + 1) * Math.pow(rng(), 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x;
    let v;
    do {
      x = normal(rng);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = rng();
    if (u < 1 - 0.0331 * x * x * x * x) return d * v;
    if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
}

/** Walker alias table over non-negative weights: O(1) draws. */
function aliasTable(weights) {
  const n = weights.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += weights[i];
  const prob = new Float64Array(n);
  const alias = new Int32Array(n);
  const small = [];
  const large = [];
  const scaled = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    scaled[i] = (weights[i] * n) / sum;
    (scaled[i] < 1 ? small : large).push(i);
  }
  while (small.length && large.length) {
    const s = small.pop();
    const l = large.pop();
    prob[s] = scaled[s];
    alias[s] = l;
    scaled[l] = scaled[l] + scaled[s] - 1;
    (scaled[l] < 1 ? small : large).push(l);
  }
  for (const i of large) prob[i] = 1;
  for (const i of small) prob[i] = 1;
  return (rng) => {
    const i = Math.floor(rng() * n);
    return rng() < prob[i] ? i : alias[i];
  };
}

// ---------------------------------------------------------------------------------------------
// Surge series

const SURGE_CLASSES = { quiet: 0.2, mid: 5, busy: 50 };
const SURGE_MAGNITUDES = [1.5, 2, 3, 5, 10];
const SURGE_DURATIONS = [1, 2, 3, 6, 12];

/**
 * One subreddit's posts per 5-minute bucket: level × daily × weekly × linear trend, Poisson or
 * gamma-Poisson (overdispersed) noise, and labelled bursts multiplying the mean for 1–12 buckets,
 * one every ~1–2 days after the first day (so warm-up never hides one).
 */
function genSurgeSeries(seed, cls, days, bucketMs = 5 * MINUTE) {
  const rng = rngFrom(seed);
  const n = Math.round((days * DAY) / bucketMs);
  const start = EPOCH + Math.floor(rng() * 7 * 24) * HOUR;
  const base = SURGE_CLASSES[cls] * Math.exp(0.3 * normal(rng));
  const dailyAmp = uniform(rng, 0.2, 0.6);
  const dailyPhase = uniform(rng, 0, 2 * Math.PI);
  const weeklyAmp = uniform(rng, 0, 0.25);
  const weeklyPhase = uniform(rng, 0, 2 * Math.PI);
  const weekend = uniform(rng, 0.7, 1.3);
  const trend = uniform(rng, -0.4, 0.6);
  const overdispersed = rng() < 0.5;
  const shape = uniform(rng, 5, 40);
  const bursts = [];
  const perDay = DAY / bucketMs;
  for (let t = perDay + Math.floor(rng() * perDay); t < n - 24; ) {
    const duration = pick(rng, SURGE_DURATIONS);
    bursts.push({ start: t, duration, magnitude: pick(rng, SURGE_MAGNITUDES) });
    t += duration + Math.floor(perDay * uniform(rng, 0.8, 1.8));
  }
  const multiplier = new Float64Array(n).fill(1);
  for (const b of bursts) for (let i = b.start; i < b.start + b.duration; i++) multiplier[i] = b.magnitude;
  const counts = new Float64Array(n);
  const means = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t = start + i * bucketMs;
    const dayPos = ((t % DAY) / DAY) * 2 * Math.PI;
    const weekPos = (((t - EPOCH) % WEEK) / WEEK) * 2 * Math.PI;
    const dow = Math.floor(((t - EPOCH) % WEEK) / DAY); // 0 = Monday
    const mean =
      base *
      (1 + dailyAmp * Math.sin(dayPos + dailyPhase)) *
      (1 + weeklyAmp * Math.sin(weekPos + weeklyPhase)) *
      (dow >= 5 ? weekend : 1) *
      (1 + (trend * i) / n);
    means[i] = mean;
    const lam = mean * multiplier[i] * (overdispersed ? gamma(rng, shape) / shape : 1);
    counts[i] = poisson(rng, lam);
  }
  return { cls, start, bucketMs, counts, means, bursts, overdispersed, base };
}

// ---------------------------------------------------------------------------------------------
// Velocity streams

const SYLLABLES = [];
for (const c of 'bdfghjklmnprtvz') for (const v of 'aiou') SYLLABLES.push(c + v);

/**
 * Pseudo-words made of consonant+vowel syllables: they end in a vowel so the light stemmer leaves
 * them alone, and (checked) none is a stopword, so token = word.
 */
function makeVocabulary(size, stopwords, seed) {
  const rng = rngFrom(seed);
  const words = [];
  const seen = new Set();
  while (words.length < size) {
    const syl = 2 + Math.floor(rng() * 3);
    let w = '';
    for (let i = 0; i < syl; i++) w += pick(rng, SYLLABLES);
    if (seen.has(w) || stopwords.has(w)) continue;
    seen.add(w);
    words.push(w);
  }
  return words;
}

const FILLER = ['the', 'and', 'for', 'what', 'this', 'with', 'have', 'just', 'is', 'a', 'to', 'of', 'in', 'my', 'it', 'on'];
const VELOCITY_CLASSES = { quiet: 5, mid: 60, busy: 300 };
const KEYWORD_MAGNITUDES = [2, 3, 5, 10];
const NEW_KEYWORD_SHARES = [0.01, 0.03, 0.1];
const KEYWORD_DURATIONS = [1, 2, 4, 8];

/**
 * A subreddit's posts, bucket by bucket (30 min): titles (and some self-texts) drawn from a Zipf
 * vocabulary whose weights drift day to day, with a few unlabelled "hot" words boosted up to 1.6×
 * per bucket (natural topical noise), daily volume cycle, labelled keyword bursts (an existing word
 * ×2–×10 its share, or a brand-new word at 1–10% of posts), and UNLABELLED subreddit-wide surges
 * (×3–×6 volume, same word mix) that velocity must ignore.
 *
 * Returns { buckets, bursts, surges, forEachBucket(cb) }: cb(index, bucketStartMs, posts).
 */
function genVelocityStream(seed, cls, days, vocab, bucketMs = 30 * MINUTE) {
  const rng = rngFrom(seed);
  const n = Math.round((days * DAY) / bucketMs);
  const start = EPOCH + Math.floor(rng() * 7 * 24) * HOUR;
  const perBucket = VELOCITY_CLASSES[cls] * Math.exp(0.2 * normal(rng));
  const V = vocab.length;
  // A per-subreddit rank order of the shared vocabulary.
  const order = Array.from({ length: V }, (_, i) => i);
  for (let i = V - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const zipf = new Float64Array(V);
  for (let r = 0; r < V; r++) zipf[r] = 1 / (r + 1);
  const drift = new Float64Array(V);
  const meanTokens = 9 + 0.2 * 20; // title 5–13 (avg 9) + 20% of posts with a 20-token self-text
  let zsum = 0;
  for (let r = 0; r < V; r++) zsum += zipf[r];
  const postShare = (r) => 1 - Math.pow(1 - zipf[r] / zsum, meanTokens);

  const perDay = DAY / bucketMs;
  const bursts = [];
  const surges = [];
  let nextId = 0;
  let newWord = 0;
  for (let t = Math.floor(perDay / 2) + Math.floor(rng() * perDay); t < n - 10; ) {
    const duration = pick(rng, KEYWORD_DURATIONS);
    if (rng() < 0.7) {
      const rank = Math.floor(Math.exp(uniform(rng, Math.log(10), Math.log(300))));
      const magnitude = pick(rng, KEYWORD_MAGNITUDES);
      const s = postShare(rank);
      bursts.push({ start: t, duration, keyword: vocab[order[rank]], rank, magnitude, baseShare: s, inject: Math.min(1, ((magnitude - 1) * s) / (1 - s)), kind: 'existing' });
    } else {
      const share = pick(rng, NEW_KEYWORD_SHARES);
      const w = `zy${(seed % 1000).toString(36)}x${(newWord++).toString(36)}o`;
      bursts.push({ start: t, duration, keyword: w, rank: -1, magnitude: share, baseShare: 0, inject: share, kind: 'new' });
    }
    t += duration + Math.floor(perDay * uniform(rng, 0.6, 1.4));
  }
  // Surges sit between bursts: velocity must stay silent through them.
  for (let i = 0; i + 1 < bursts.length; i += 2) {
    const gapStart = bursts[i].start + bursts[i].duration + 4;
    const gapEnd = bursts[i + 1].start - 4;
    const duration = 2 + Math.floor(rng() * 7);
    if (gapEnd - gapStart > duration) surges.push({ start: gapStart + Math.floor(rng() * (gapEnd - gapStart - duration)), duration, factor: uniform(rng, 3, 6) });
  }
  const burstAt = new Array(n).fill(null);
  for (const b of bursts) for (let i = b.start; i < b.start + b.duration; i++) burstAt[i] = b;
  const surgeAt = new Float64Array(n).fill(1);
  for (const s of surges) for (let i = s.start; i < s.start + s.duration; i++) surgeAt[i] = s.factor;

  function forEachBucket(cb) {
    let sampler = null;
    let day = -1;
    const weights = new Float64Array(V);
    let weightSum = 0;
    for (let i = 0; i < n; i++) {
      const t = start + i * bucketMs;
      const d = Math.floor((i * bucketMs) / DAY);
      if (d !== day) {
        day = d;
        // Topics drift: each word's weight takes a small random-walk step every day.
        for (let r = 0; r < V; r++) {
          drift[r] += 0.15 * normal(rng) - 0.02 * drift[r];
          weights[r] = zipf[r] * Math.exp(drift[r]);
        }
        weightSum = 0;
        for (let r = 0; r < V; r++) weightSum += weights[r];
        sampler = aliasTable(weights);
      }
      // Hot words: 20 ranks from the top 2000 get ×1–1.6 this bucket (unlabelled noise).
      const hot = [];
      let hotMass = 0;
      for (let h = 0; h < 20; h++) {
        const r = 10 + Math.floor(rng() * 1990);
        const extra = weights[r] * uniform(rng, 0, 0.6);
        hot.push([r, extra]);
        hotMass += extra;
      }
      const totalMass = weightSum + hotMass;
      const hotProb = hotMass / totalMass;
      const hotSampler = aliasTable(hot.map((h) => h[1]));
      const dayPos = ((t % DAY) / DAY) * 2 * Math.PI;
      const volume = perBucket * (1 + 0.4 * Math.sin(dayPos)) * surgeAt[i];
      const count = poisson(rng, volume);
      const burst = burstAt[i];
      const posts = new Array(count);
      for (let p = 0; p < count; p++) {
        const title = sentence(5 + Math.floor(rng() * 9), hot, hotProb, hotSampler);
        const selftext = rng() < 0.2 ? sentence(20, hot, hotProb, hotSampler) : undefined;
        const id = (nextId++).toString(36);
        let finalTitle = title;
        if (burst && rng() < burst.inject) finalTitle = `${title} ${burst.keyword}`;
        posts[p] = { id, title: finalTitle, selftext, permalink: `/r/bench/comments/${id}/` };
      }
      cb(i, t, posts);
    }
    function sentence(len, hot, hotProb, hotSampler) {
      const parts = new Array(len);
      for (let k = 0; k < len; k++) {
        if (rng() < 0.3) parts[k] = FILLER[Math.floor(rng() * FILLER.length)];
        else {
          const r = rng() < hotProb ? hot[hotSampler(rng)][0] : sampler(rng);
          parts[k] = vocab[order[r]];
        }
      }
      return parts.join(' ');
    }
  }
  return { cls, start, bucketMs, buckets: n, bursts, surges, forEachBucket };
}

// ---------------------------------------------------------------------------------------------
// Metrics

function quantile(sorted, q) {
  if (sorted.length === 0) return null;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

function round(x, d = 3) {
  if (x === null || x === undefined || !Number.isFinite(x)) return x;
  const f = 10 ** d;
  return Math.round(x * f) / f;
}

/** Aggregates burst outcomes and event counts into recall/precision/delay/false-alarm figures. */
class Tally {
  constructor() {
    this.bursts = 0;
    this.detected = 0;
    this.delays = [];
    this.events = 0;
    this.trueEvents = 0;
    this.falseAlarms = 0;
    this.days = 0;
  }
  burst(detectedDelay) {
    this.bursts++;
    if (detectedDelay !== null) {
      this.detected++;
      this.delays.push(detectedDelay);
    }
  }
  summary() {
    const d = [...this.delays].sort((a, b) => a - b);
    return {
      bursts: this.bursts,
      recall: this.bursts ? round(this.detected / this.bursts) : null,
      precision: this.events ? round(this.trueEvents / this.events) : null,
      medianDelayBuckets: quantile(d, 0.5),
      p90DelayBuckets: round(quantile(d, 0.9), 1),
      events: this.events,
      falseAlarms: this.falseAlarms,
      falseAlarmsPerDay: this.days ? round(this.falseAlarms / this.days, 4) : null,
      falseAlarmsPerWeek: this.days ? round((7 * this.falseAlarms) / this.days, 3) : null,
    };
  }
}

/**
 * Replays posts through the rising detector as the poller sees them: every post re-read every 15
 * minutes (first read 5–15 min after creation) for 12 h, its score growing as q·(1 − e^(−age/tau)).
 * Returns the detection per post id that fired.
 */
function replayRising(det, state, posts, rng) {
  const reads = [];
  for (const p of posts) for (let a = 5 * MINUTE + rng() * 10 * MINUTE; a < 12 * HOUR; a += 15 * MINUTE) reads.push([p.created + a, p]);
  reads.sort((x, y) => x[0] - y[0]);
  const fired = new Map();
  for (const [t, p] of reads) {
    const grown = 1 - Math.exp(-(t - p.created) / p.tau);
    const d = det.observeRising(state, {
      postId: p.id,
      createdUtcMs: p.created,
      observedAtMs: t,
      score: Math.round(1 + p.q * grown),
      numComments: Math.round(0.3 * p.q * grown),
      permalink: '',
      title: '',
    });
    if (d) fired.set(p.id, d);
  }
  return fired;
}

module.exports = {
  MINUTE,
  HOUR,
  DAY,
  WEEK,
  EPOCH,
  loadDetectors,
  flag,
  rngFrom,
  normal,
  uniform,
  poisson,
  gamma,
  aliasTable,
  genSurgeSeries,
  genVelocityStream,
  replayRising,
  makeVocabulary,
  SURGE_CLASSES,
  SURGE_MAGNITUDES,
  VELOCITY_CLASSES,
  Tally,
  quantile,
  round,
};
