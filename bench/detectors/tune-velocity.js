'use strict';
/**
 * Velocity half of tune.js: streams are generated and tokenized ONCE into per-bucket keyword
 * counts, then every parameter set replays them through observeVelocityCounts (same scoring and
 * state code as observeVelocityPosts, minus tokenization and evidence).
 */
const L = require('./lib');
const Q = require('./quality');

const GRACE = 1;

function prepare(det, seed) {
  const cfg = Q.velocityConfig(false);
  const vocab = L.makeVocabulary(20000, det.ENGLISH_STOPWORDS, seed);
  const streams = [];
  let k = 0;
  for (const cls of Object.keys(cfg.perClass)) {
    for (let i = 0; i < cfg.perClass[cls]; i++) {
      const stream = L.genVelocityStream(seed * 1000 + 500 + k++, cls, cfg.days, vocab);
      const names = [];
      const ids = new Map();
      const buckets = [];
      stream.forEachBucket((idx, t, posts) => {
        const counts = new Map();
        for (const p of posts) for (const kw of det.postKeywords(p.title, p.selftext)) counts.set(kw, (counts.get(kw) ?? 0) + 1);
        const kwIds = new Int32Array(counts.size);
        const c = new Int32Array(counts.size);
        let j = 0;
        for (const [kw, n] of counts) {
          let id = ids.get(kw);
          if (id === undefined) {
            id = names.length;
            names.push(kw);
            ids.set(kw, id);
          }
          kwIds[j] = id;
          c[j++] = n;
        }
        buckets.push({ t, total: posts.length, kwIds, c });
      });
      streams.push({ cls, stream, names, buckets });
    }
  }
  return { cfg, streams };
}

function evaluate(det, params, prepared) {
  const tallies = new Map();
  const tally = (k) => {
    if (!tallies.has(k)) tallies.set(k, new L.Tally());
    return tallies.get(k);
  };
  const resolved = det.resolveVelocityParams(params);
  let surgeEvents = 0;
  for (const { cls, stream, names, buckets } of prepared.streams) {
    const state = det.createVelocityState(params);
    const events = [];
    buckets.forEach((b, idx) => {
      const m = new Map();
      for (let j = 0; j < b.kwIds.length; j++) m.set(names[b.kwIds[j]], b.c[j]);
      for (const d of det.observeVelocityCounts(state, b.t, b.total, m)) events.push({ idx, keyword: d.keyword });
    });
    const inWindow = (bu, e) => e.keyword === bu.keyword && e.idx >= bu.start && e.idx <= bu.start + bu.duration - 1 + GRACE;
    for (const bu of stream.bursts) {
      const first = events.find((e) => inWindow(bu, e));
      let n = 0;
      for (let j = bu.start; j < bu.start + bu.duration; j++) n += buckets[j].total;
      const expected = (n / bu.duration) * (bu.baseShare + (1 - bu.baseShare) * bu.inject);
      const expClass = expected < 5 ? 'expectedPosts:<5' : expected < 15 ? 'expectedPosts:5-15' : 'expectedPosts:15+';
      const mag = bu.kind === 'new' ? `new:${bu.magnitude * 100}%` : `mag:${bu.magnitude}x`;
      for (const g of ['all', `class:${cls}`, mag, expClass, `${cls}:${expClass}`]) tally(g).burst(first === undefined ? null : first.idx - bu.start);
    }
    for (const e of events) {
      const match = stream.bursts.some((bu) => inWindow(bu, e));
      if (!match && stream.surges.some((s) => e.idx >= s.start && e.idx < s.start + s.duration + GRACE)) surgeEvents++;
      for (const g of ['all', `class:${cls}`]) {
        const t = tally(g);
        t.events++;
        if (match) t.trueEvents++;
        else t.falseAlarms++;
      }
    }
    const monitored = ((buckets.length - resolved.warmupBuckets) * stream.bucketMs) / L.DAY;
    for (const g of ['all', `class:${cls}`]) tally(g).days += monitored;
  }
  const out = {};
  for (const [k, t] of tallies) out[k] = t.summary();
  out.surgeEvents = surgeEvents;
  return out;
}

function product(grid) {
  let combos = [{}];
  for (const [k, values] of Object.entries(grid)) combos = combos.flatMap((c) => values.map((v) => ({ ...c, [k]: v })));
  return combos;
}

function tuneVelocity(det, seed, gridArg) {
  const t0 = Date.now();
  const prepared = prepare(det, seed);
  console.error(`prepared ${prepared.streams.length} streams in ${(Date.now() - t0) / 1000}s`);
  const grid = gridArg ?? {
    threshold: [3.5, 4, 4.5, 5],
    minRatio: [2, 3],
    dispersion: [1, 1.5],
    priorShare: [0.001, 0.002, 0.005],
  };
  const rows = [];
  for (const params of product(grid)) {
    const r = evaluate(det, params, prepared);
    const ok5 = ['busy:expectedPosts:5-15', 'busy:expectedPosts:15+', 'mid:expectedPosts:5-15', 'mid:expectedPosts:15+'];
    let bursts = 0;
    let hit = 0;
    for (const g of ok5) if (r[g]) {
      bursts += r[g].bursts;
      hit += r[g].recall * r[g].bursts;
    }
    rows.push({
      params: JSON.stringify(params),
      recall3plus: L.round(hit / bursts),
      exp15: r['expectedPosts:15+']?.recall,
      exp5: r['expectedPosts:5-15']?.recall,
      mag3x: r['mag:3x']?.recall,
      mag2x: r['mag:2x']?.recall,
      new3: r['new:3%']?.recall,
      allRecall: r.all.recall,
      precision: r.all.precision,
      medDelay: r.all.medianDelayBuckets,
      surgeFA: r.surgeEvents,
      faWeekBusy: r['class:busy']?.falseAlarmsPerWeek,
      faWeekMid: r['class:mid']?.falseAlarmsPerWeek,
      faWeekQuiet: r['class:quiet']?.falseAlarmsPerWeek,
    });
  }
  return rows;
}

module.exports = { tuneVelocity, prepare, evaluate };
