'use strict';
/**
 * Quality of the DEFAULT detector parameters on seeded synthetic series with labelled bursts.
 *
 *   npx tsc -p tsconfig.build.json            # or compile only the detectors, see README
 *   node bench/detectors/quality.js [--dist=/tmp/det-dist] [--seed=42] [--quick] [--only=surge|velocity|rising|real|wsb]
 *
 * Prints tables and writes bench/results/detectors-quality.json.
 * A burst counts as detected when an event fires from its first bucket to `GRACE` buckets after its
 * last; an event outside every burst window is a false alarm.
 *
 * Real data (surge): the labelled mention-count series in `--real-data=DIR` (default
 * ../shared/data/nab-realtweets beside the project; the section is skipped with a note when the
 * directory is missing) are run through the production backtest and scored with the NAB standard
 * profile (src/trends/detectors/nab.ts): the per-file table, the total, false alarms per
 * series-week, and the leave-one-file-out figure (REAL_GRID: pick the best set on four files,
 * score the fifth, rotate).
 */
const fs = require('node:fs');
const path = require('node:path');
const L = require('./lib');

const SURGE_GRACE = 2;
const VELOCITY_GRACE = 1;

function surgeConfig(quick) {
  return { days: quick ? 21 : 35, perClass: quick ? 10 : 30, classes: Object.keys(L.SURGE_CLASSES) };
}

function velocityConfig(quick) {
  return { days: quick ? 14 : 28, perClass: quick ? { busy: 3, mid: 3, quiet: 2 } : { busy: 8, mid: 8, quiet: 4 } };
}

/** Run surge with `params` over the generated series; returns tallies keyed by group name. */
function evaluateSurge(det, params, cfg, seed, seriesList) {
  const tallies = new Map();
  const tally = (k) => {
    if (!tallies.has(k)) tallies.set(k, new L.Tally());
    return tallies.get(k);
  };
  const resolved = det.resolveSurgeParams(params);
  const list = seriesList ?? generateSurge(cfg, seed);
  for (const s of list) {
    const state = det.createSurgeState(params);
    const events = [];
    for (let i = 0; i < s.counts.length; i++) {
      const d = det.observeSurgeBucket(state, s.start + i * s.bucketMs, s.counts[i]);
      if (d) events.push(Math.round((d.bucketEnd - s.start) / s.bucketMs) - 1);
    }
    const windowOf = (b) => [b.start, b.start + b.duration - 1 + SURGE_GRACE];
    const overdisp = s.overdispersed ? 'overdispersed' : 'poisson';
    const groups = ['all', `class:${s.cls}`, `noise:${overdisp}`];
    for (const b of s.bursts) {
      const [lo, hi] = windowOf(b);
      const first = events.find((e) => e >= lo && e <= hi);
      const delay = first === undefined ? null : first - b.start;
      for (const g of [...groups, `mag:${b.magnitude}x`, `${s.cls}:${b.magnitude}x`, `dur:${b.duration}`, `${s.cls}:dur:${b.duration}`]) tally(g).burst(delay);
    }
    const periodSplit = Math.round((14 * L.DAY) / s.bucketMs);
    for (const e of events) {
      const match = s.bursts.some((b) => {
        const [lo, hi] = windowOf(b);
        return e >= lo && e <= hi;
      });
      const period = e < periodSplit ? 'period:days0-14' : 'period:days14+';
      for (const g of [...groups, period]) {
        const t = tally(g);
        t.events++;
        if (match) t.trueEvents++;
        else t.falseAlarms++;
      }
    }
    const monitored = ((s.counts.length - resolved.warmupBuckets) * s.bucketMs) / L.DAY;
    for (const g of groups) tally(g).days += monitored;
    tally('period:days0-14').days += 14 - (resolved.warmupBuckets * s.bucketMs) / L.DAY;
    tally('period:days14+').days += (s.counts.length * s.bucketMs) / L.DAY - 14;
  }
  return summarize(tallies);
}

function generateSurge(cfg, seed) {
  const list = [];
  let k = 0;
  for (const cls of cfg.classes) for (let i = 0; i < cfg.perClass; i++) list.push(L.genSurgeSeries(seed * 1000 + k++, cls, cfg.days));
  return list;
}

function summarize(tallies) {
  const out = {};
  for (const k of [...tallies.keys()].sort(groupOrder)) out[k] = tallies.get(k).summary();
  return out;
}

/** Print order: overall, then per class / magnitude / duration / other, then class × magnitude etc. */
function groupOrder(a, b) {
  const rank = (g) => {
    if (g === 'all') return 0;
    const prefix = g.split(':')[0];
    const order = ['class', 'mag', 'new', 'dur', 'expectedPosts', 'noise', 'period', 'busy', 'mid', 'quiet'];
    const i = order.indexOf(prefix);
    return i < 0 ? order.length + 1 : i + 1;
  };
  const num = (s) =>
    s.replace(/\d+(\.\d+)?/g, (m) => {
      const [int, frac] = m.split('.');
      return int.padStart(8, '0') + (frac ? `.${frac}` : '');
    });
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  return num(a) < num(b) ? -1 : num(a) > num(b) ? 1 : 0;
}

/** Feed each generated stream through observeVelocityPosts (tokenizer included). */
function evaluateVelocity(det, params, cfg, seed, vocab) {
  const tallies = new Map();
  const tally = (k) => {
    if (!tallies.has(k)) tallies.set(k, new L.Tally());
    return tallies.get(k);
  };
  const resolved = det.resolveVelocityParams(params);
  let surgeBuckets = 0;
  let surgeEvents = 0;
  let surgeCount = 0;
  let k = 0;
  for (const cls of Object.keys(cfg.perClass)) {
    for (let i = 0; i < cfg.perClass[cls]; i++) {
      const stream = L.genVelocityStream(seed * 1000 + 500 + k++, cls, cfg.days, vocab);
      const state = det.createVelocityState(params);
      const events = [];
      const sizes = new Float64Array(stream.buckets);
      stream.forEachBucket((idx, t, posts) => {
        sizes[idx] = posts.length;
        for (const d of det.observeVelocityPosts(state, t, posts)) events.push({ idx, keyword: d.keyword, evidence: d.postIds.length });
      });
      const inWindow = (b, e) => e.keyword === b.keyword && e.idx >= b.start && e.idx <= b.start + b.duration - 1 + VELOCITY_GRACE;
      for (const b of stream.bursts) {
        const first = events.find((e) => inWindow(b, e));
        const delay = first === undefined ? null : first.idx - b.start;
        let n = 0;
        for (let j = b.start; j < b.start + b.duration; j++) n += sizes[j];
        const expected = (n / b.duration) * (b.baseShare + (1 - b.baseShare) * b.inject);
        const expClass = expected < 5 ? 'expectedPosts:<5' : expected < 15 ? 'expectedPosts:5-15' : 'expectedPosts:15+';
        const mag = b.kind === 'new' ? `new:${b.magnitude * 100}%` : `mag:${b.magnitude}x`;
        for (const g of ['all', `class:${cls}`, mag, `${cls}:${mag}`, expClass, `${cls}:${expClass}`, `dur:${b.duration}`]) tally(g).burst(delay);
      }
      for (const s of stream.surges) {
        surgeCount++;
        surgeBuckets += s.duration;
      }
      for (const e of events) {
        const match = stream.bursts.some((b) => inWindow(b, e));
        const duringSurge = stream.surges.some((s) => e.idx >= s.start && e.idx < s.start + s.duration + VELOCITY_GRACE);
        if (duringSurge && !match) surgeEvents++;
        for (const g of ['all', `class:${cls}`]) {
          const t = tally(g);
          t.events++;
          if (match) t.trueEvents++;
          else t.falseAlarms++;
        }
      }
      const monitored = ((stream.buckets - resolved.warmupBuckets) * stream.bucketMs) / L.DAY;
      for (const g of ['all', `class:${cls}`]) tally(g).days += monitored;
    }
  }
  const out = summarize(tallies);
  out.subredditWideSurges = {
    surges: surgeCount,
    surgeBuckets,
    falseEventsDuringSurges: surgeEvents,
    falseEventsPerSurge: surgeCount ? L.round(surgeEvents / surgeCount, 3) : null,
  };
  return out;
}

/**
 * trends.rising sanity simulation (no ground truth exists for "rising", so this only checks the
 * event volume and that what fires is the best posts, early). Posts arrive as a Poisson process;
 * each has a lognormal final score Q (median 7) reached with time constant 1–4 h, comments ≈ 0.3·Q;
 * the poller re-reads every post every 15 minutes for 12 hours. "Top" = the 1% highest-Q posts.
 */
function evaluateRising(det, params, seed, days) {
  const out = {};
  for (const [cls, perHour] of Object.entries({ quiet: 2, mid: 20, busy: 100 })) {
    const rng = L.rngFrom(seed * 1000 + 900 + perHour);
    const state = det.createRisingState(params);
    const posts = [];
    for (let t = 0; t < days * L.DAY; ) {
      t += (-Math.log(1 - rng()) / perHour) * L.HOUR;
      posts.push({ id: `r${posts.length}`, created: L.DAY + t, q: Math.exp(2 + 1.5 * L.normal(rng)), tau: (1 + 3 * rng()) * L.HOUR });
    }
    const fired = L.replayRising(det, state, posts, rng);
    const sortedQ = posts.map((p) => p.q).sort((a, b) => b - a);
    const topQ = sortedQ[Math.floor(sortedQ.length * 0.01)];
    const top = posts.filter((p) => p.q >= topQ);
    const topFired = top.filter((p) => fired.has(p.id));
    const firedTop = [...fired.keys()].filter((id) => posts[Number(id.slice(1))].q >= topQ).length;
    const firedTop5 = [...fired.keys()].filter((id) => posts[Number(id.slice(1))].q >= sortedQ[Math.floor(sortedQ.length * 0.05)]).length;
    const ages = topFired.map((p) => fired.get(p.id).ageMinutes).sort((a, b) => a - b);
    out[`class:${cls}`] = {
      postsPerHour: perHour,
      posts: posts.length,
      events: fired.size,
      eventsPerDay: L.round(fired.size / days, 2),
      eventsPerPost: L.round(fired.size / posts.length, 4),
      top1pctPosts: top.length,
      top1pctDetected: top.length ? L.round(topFired.length / top.length, 3) : null,
      eventsOnTop1pct: fired.size ? L.round(firedTop / fired.size, 3) : null,
      eventsOnTop5pct: fired.size ? L.round(firedTop5 / fired.size, 3) : null,
      medianAgeMinutesAtDetectionTop1pct: L.quantile(ages, 0.5),
    };
  }
  return out;
}

function pad(s, n) {
  s = String(s ?? '-');
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

function printTable(title, rows) {
  console.log(`\n${title}`);
  const cols = ['group', 'bursts', 'recall', 'precision', 'medDelay', 'p90Delay', 'events', 'FA', 'FA/day', 'FA/week'];
  const widths = [26, 7, 7, 10, 9, 9, 7, 6, 8, 8];
  console.log(cols.map((c, i) => pad(c, widths[i])).join(''));
  for (const [g, r] of Object.entries(rows)) {
    if (r.bursts === undefined) continue;
    const vals = [g, r.bursts, r.recall, r.precision, r.medianDelayBuckets, r.p90DelayBuckets, r.events, r.falseAlarms, r.falseAlarmsPerDay, r.falseAlarmsPerWeek];
    console.log(vals.map((v, i) => pad(v, widths[i])).join(''));
  }
}

// ---------------------------------------------------------------------------------------------
// Surge on real labelled series (NAB standard profile)

const WEEK_MS = 7 * L.DAY;
/** NAB scores nothing in the first 15 % of a file (at most 750 rows); false alarms are per scored week. */
const probationRows = (n) => Math.min(Math.floor(0.15 * n), 750);

/**
 * Coarse grid of the leave-one-file-out check: the knobs that set how eager surge is (score, lift,
 * window, episode length, how fast the level moves). Everything else stays at its default.
 */
const REAL_GRID = {
  threshold: [3, 3.5, 4, 5],
  minLift: [1.5, 2, 3],
  windowBuckets: [12, 24, 48],
  cooldownBuckets: [144, 288],
  levelHalfLifeBuckets: [288, 1008],
};

/** The NAB scorer beside the detectors L.loadDetectors loads (same --dist). */
function loadNab(argv) {
  const arg = argv.find((a) => a.startsWith('--dist='));
  return require(path.join(arg ? path.resolve(arg.slice('--dist='.length)) : path.join(__dirname, '../../dist/trends/detectors'), 'nab'));
}

function defaultRealDir() {
  return path.resolve(__dirname, '../../../shared/data/nab-realtweets');
}

/** The labelled series of `dir` (windows.json names them), parsed with the production CSV parser. */
function loadRealSeries(det, dir) {
  const windows = JSON.parse(fs.readFileSync(path.join(dir, 'windows.json'), 'utf8'));
  const toMs = (s) => Date.parse(String(s).trim().replace(' ', 'T') + 'Z');
  return Object.keys(windows)
    .sort()
    .map((file) => {
      const series = det.parseSeriesCsv(fs.readFileSync(path.join(dir, file), 'utf8'));
      const rows = series.map((p) => p.timestamp);
      const scoredMs = (rows.length - probationRows(rows.length)) * (rows[1] - rows[0]);
      return { file, series, rows, weeks: scoredMs / WEEK_MS, windows: windows[file].map(([a, b]) => ({ startMs: toMs(a), endMs: toMs(b) })) };
    });
}

/** NAB score of one file under `params` (the production backtest, as `trendhooks backtest --kind surge` runs it). */
function scoreRealFile(det, nab, f, params) {
  const points = det.runBacktest('surge', f.series, params);
  // A detection is stamped with its bucket's own row timestamp where the backtest gives one (as the CLI prints it).
  const flags = nab.nabFlags(
    f.rows,
    points.filter((p) => p.detected).map((p) => p.rowTimestamp ?? p.timestamp),
  );
  return nab.scoreNabFile(f.rows, flags, f.windows);
}

function realSummary(nab, files, scores) {
  const falseAlarms = scores.reduce((a, s) => a + s.falseAlarms, 0);
  const weeks = files.reduce((a, f) => a + f.weeks, 0);
  return {
    score: L.round(nab.nabTotal(scores), 1),
    windows: scores.reduce((a, s) => a + s.windows, 0),
    caught: scores.reduce((a, s) => a + s.caught, 0),
    falseAlarms,
    seriesWeeks: L.round(weeks, 2),
    falseAlarmsPerSeriesWeek: L.round(falseAlarms / weeks, 3),
    worstFalseAlarmsPerSeriesWeek: L.round(Math.max(...scores.map((s, i) => s.falseAlarms / files[i].weeks)), 3),
  };
}

function product(grid) {
  let combos = [{}];
  for (const [k, values] of Object.entries(grid)) combos = combos.flatMap((c) => values.map((v) => ({ ...c, [k]: v })));
  return combos;
}

/**
 * Every set of `grid` scored on every file once; a fold then picks, among the sets with at most one
 * false alarm per series-week on its four training files, the one with the best NAB total there,
 * and scores it on the held-out file. The leave-one-file-out total sums the held-out files' scores.
 */
function leaveOneFileOut(det, nab, files, grid) {
  const sets = product(grid).map((params) => ({ params, scores: files.map((f) => scoreRealFile(det, nab, f, params)) }));
  const folds = files.map((held, h) => {
    let best = null;
    for (const s of sets) {
      const trainFiles = files.filter((_, i) => i !== h);
      const train = s.scores.filter((_, i) => i !== h);
      const fa = train.reduce((a, x) => a + x.falseAlarms, 0) / trainFiles.reduce((a, f) => a + f.weeks, 0);
      const total = nab.nabTotal(train);
      if (fa <= 1 && (best === null || total > best.trainScore)) best = { params: s.params, trainScore: total, held: s.scores[h] };
    }
    return {
      heldOut: held.file,
      chosen: best.params,
      trainScore: L.round(best.trainScore, 1),
      heldOutScore: L.round(best.held.score, 1),
      heldOutCaught: `${best.held.caught}/${best.held.windows}`,
      heldOutFalseAlarms: best.held.falseAlarms,
      _score: best.held,
    };
  });
  const heldScores = folds.map((f) => f._score);
  const summary = realSummary(nab, files, heldScores);
  for (const f of folds) delete f._score;
  return {
    method: 'for each file: the grid set with the best NAB total on the other four files (among sets with ≤ 1 false alarm per series-week there) is scored on that file; figures sum the five held-out scores',
    grid,
    sets: sets.length,
    folds,
    total: summary.score,
    meanHeldOut: L.round(folds.reduce((a, f) => a + f.heldOutScore, 0) / folds.length, 1),
    falseAlarmsPerSeriesWeek: summary.falseAlarmsPerSeriesWeek,
  };
}

/** The real-data section: defaults per file, total, and (unless `lofo` is false) leave-one-file-out. */
function evaluateReal(det, nab, dir, { lofo = true, grid = REAL_GRID } = {}) {
  const files = loadRealSeries(det, dir);
  const scores = files.map((f) => scoreRealFile(det, nab, f, {}));
  const perFile = files.map((f, i) => ({
    file: f.file,
    detections: scores[i].detections,
    windows: scores[i].windows,
    caught: scores[i].caught,
    falseAlarms: scores[i].falseAlarms,
    seriesWeeks: L.round(f.weeks, 2),
    falseAlarmsPerSeriesWeek: L.round(scores[i].falseAlarms / f.weeks, 3),
    score: L.round(scores[i].score, 1),
  }));
  const out = { data: path.relative(path.join(__dirname, '../..'), dir), profile: 'NAB standard (TP 1, FP 0.11, FN 1; 15 % probation)', perFile, total: realSummary(nab, files, scores) };
  if (lofo) out.leaveOneFileOut = leaveOneFileOut(det, nab, files, grid);
  return out;
}

function printReal(r) {
  console.log(`\ntrends.surge on real labelled series (${r.data}, ${r.profile})`);
  console.table(r.perFile);
  const t = r.total;
  console.log(`NAB standard score ${t.score} over ${t.windows} windows, ${t.caught} caught; ${t.falseAlarms} false alarms = ${t.falseAlarmsPerSeriesWeek} per series-week (worst file ${t.worstFalseAlarmsPerSeriesWeek})`);
  if (r.leaveOneFileOut) {
    const x = r.leaveOneFileOut;
    console.log(`leave-one-file-out over ${x.sets} parameter sets:`);
    console.table(x.folds.map((f) => ({ ...f, chosen: JSON.stringify(f.chosen) })));
    console.log(`leave-one-file-out NAB score ${x.total} (mean of held-out files ${x.meanHeldOut}), ${x.falseAlarmsPerSeriesWeek} false alarms per series-week`);
  }
}

/**
 * Real Reddit (`--only=wsb`): every r/wallstreetbets post of `--wsb-data=DIR` (default
 * ../shared/data/reddit-wsb beside the project) replayed through the trend pipeline's own code path
 * (dist/trends/replay.js, what `trendhooks backtest --posts` runs), checked against the stories and
 * repost floods its README lists: a story is caught when a velocity event carrying one of its words
 * is emitted from its first post to two hours after; a flood is ignored when no event of any kind is
 * emitted from its first post to an hour after its last.
 */
const WSB_STORIES = [
  { name: 'Musk richest person', file: 'wsb-2021-01.ndjson', from: '2021-01-07T15:20:00Z', words: ['musk', 'elon', 'richest'] },
  { name: 'YouTuber buys a GameStop store (minor)', file: 'wsb-2021-01.ndjson', from: '2021-01-09T21:10:00Z', words: ['beast', 'store', 'youtuber'] },
  { name: 'Cohen joins the GameStop board', file: 'wsb-2021-01.ndjson', from: '2021-01-11T12:36:56Z', words: ['cohen', 'ryan', 'board'] },
  { name: 'TV shout-out (Josh Brown)', file: 'wsb-2021-01.ndjson', from: '2021-01-11T19:31:14Z', words: ['josh', 'brown'] },
  { name: 'SOS pump', file: 'wsb-2021-05.ndjson', from: '2021-05-06T02:40:00Z', words: ['sos'] },
];
const WSB_FLOODS = [
  { file: 'wsb-2021-01.ndjson', from: '2021-01-08T14:52:00Z', to: '2021-01-08T14:57:00Z' },
  { file: 'wsb-2021-01.ndjson', from: '2021-01-12T00:10:00Z', to: '2021-01-12T00:35:00Z' },
  { file: 'wsb-2021-01.ndjson', from: '2021-01-12T20:19:00Z', to: '2021-01-12T20:24:00Z' },
];

function evaluateWsb(argv) {
  const dir = path.resolve(L.flag(argv, 'wsb-data', path.join(__dirname, '../../../shared/data/reddit-wsb')));
  if (!fs.existsSync(dir)) return null;
  const distArg = argv.find((a) => a.startsWith('--dist='));
  const dist = distArg ? path.resolve(distArg.slice('--dist='.length), '../..') : path.join(__dirname, '../../dist');
  const { replayPosts } = require(path.join(dist, 'trends/replay.js'));
  const { parseRedditText } = require(path.join(dist, 'posts/reddit-parse.js'));
  const at = (iso) => Date.parse(iso);
  const out = { files: {}, stories: [], floods: [] };
  const runs = {};
  for (const file of [...new Set([...WSB_STORIES, ...WSB_FLOODS].map((x) => x.file))]) {
    const posts = parseRedditText(fs.readFileSync(path.join(dir, file), 'utf8')).records.map((r) => r.post);
    const events = replayPosts(posts).events.map((e) => ({ type: e.type, timeMs: e.timeMs, data: e.event.data }));
    runs[file] = events;
    const days = (posts[posts.length - 1].createdAtMs - posts[0].createdAtMs) / L.DAY;
    out.files[file] = {
      posts: posts.length,
      velocityEvents: events.filter((e) => e.type === 'trends.velocity').length,
      surgeEvents: events.filter((e) => e.type === 'trends.surge').length,
      days: L.round(days, 1),
      events: events.map((e) => ({ time: new Date(e.timeMs).toISOString(), type: e.type, keywords: e.data.keywords, distinct_authors: e.data.distinct_authors })),
    };
  }
  for (const s of WSB_STORIES) {
    const hit = runs[s.file].find((e) => e.type === 'trends.velocity' && e.timeMs >= at(s.from) && e.timeMs <= at(s.from) + 2 * 3600_000 && e.data.keywords.some((k) => s.words.includes(k)));
    out.stories.push({ story: s.name, caught: !!hit, minutesAfterFirstPost: hit ? Math.round((hit.timeMs - at(s.from)) / 60_000) : null, keywords: hit ? hit.data.keywords.join('+') : null });
  }
  for (const f of WSB_FLOODS) {
    const events = runs[f.file].filter((e) => e.timeMs >= at(f.from) && e.timeMs <= at(f.to) + 3600_000);
    out.floods.push({ flood: `${f.from.slice(0, 16)}–${f.to.slice(11, 16)}`, ignored: events.length === 0 });
  }
  return out;
}

function printWsb(r) {
  console.log('\nr/wallstreetbets replayed through the pipeline (backtest --posts)');
  console.table(r.stories);
  console.table(r.floods);
  for (const [file, f] of Object.entries(r.files)) {
    console.log(`${file}: ${f.posts} posts over ${f.days} days, ${f.velocityEvents} velocity events, ${f.surgeEvents} surge events`);
    for (const e of f.events) console.log(`  ${e.time}  ${e.type}  ${(e.keywords ?? []).join('+')}  distinct_authors=${e.distinct_authors}`);
  }
  const caught = r.stories.filter((s) => s.caught).length;
  const ignored = r.floods.filter((f) => f.ignored).length;
  console.log(`stories caught ${caught}/${r.stories.length}, floods ignored ${ignored}/${r.floods.length}`);
}

function main() {
  const argv = process.argv.slice(2);
  const det = L.loadDetectors(argv);
  const seed = Number(L.flag(argv, 'seed', '42'));
  const quick = argv.includes('--quick');
  const only = L.flag(argv, 'only', 'all');
  const result = { generatedBy: 'bench/detectors/quality.js', seed, quick, grace: { surge: SURGE_GRACE, velocity: VELOCITY_GRACE } };
  const t0 = Date.now();
  if (only === 'all' || only === 'surge') {
    const cfg = surgeConfig(quick);
    result.surge = { params: det.DEFAULT_SURGE_PARAMS, config: cfg, results: evaluateSurge(det, {}, cfg, seed) };
    printTable(`trends.surge — ${cfg.perClass} series × ${cfg.classes.join('/')} × ${cfg.days} days, 5-min buckets (delays in buckets)`, result.surge.results);
  }
  if (only === 'all' || only === 'velocity') {
    const cfg = velocityConfig(quick);
    const vocab = L.makeVocabulary(20000, det.ENGLISH_STOPWORDS, seed);
    result.velocity = { params: det.DEFAULT_VELOCITY_PARAMS, config: cfg, results: evaluateVelocity(det, {}, cfg, seed, vocab) };
    printTable(`trends.velocity — ${JSON.stringify(cfg.perClass)} streams × ${cfg.days} days, 30-min buckets`, result.velocity.results);
    console.log('subreddit-wide surges (no keyword burst):', JSON.stringify(result.velocity.results.subredditWideSurges));
  }
  if (only === 'all' || only === 'rising') {
    const days = quick ? 3 : 7;
    result.rising = { params: det.DEFAULT_RISING_PARAMS, config: { days, pollEveryMinutes: 15 }, results: evaluateRising(det, {}, seed, days) };
    console.log(`\ntrends.rising — sanity simulation, ${days} days per class (no labelled ground truth; see README)`);
    console.table(result.rising.results);
  }
  if (only === 'all' || only === 'surge' || only === 'real') {
    const dir = path.resolve(L.flag(argv, 'real-data', defaultRealDir()));
    if (fs.existsSync(path.join(dir, 'windows.json'))) {
      const nab = loadNab(argv);
      result.surgeReal = evaluateReal(det, nab, dir, { lofo: !quick });
      printReal(result.surgeReal);
    } else console.log(`\n(no labelled real series in ${dir}: the real-data section is skipped)`);
  }
  if (only === 'all' || only === 'wsb') {
    result.wsb = evaluateWsb(argv);
    if (result.wsb) printWsb(result.wsb);
    else console.log('\n(no r/wallstreetbets posts beside the project: the wsb section is skipped)');
  }
  result.elapsedSeconds = Math.round((Date.now() - t0) / 100) / 10;
  if (!quick && only === 'all') {
    const out = path.join(__dirname, '../results/detectors-quality.json');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
    console.log(`\nwrote ${path.relative(process.cwd(), out)} (${result.elapsedSeconds}s)`);
  } else console.log(`\n(${result.elapsedSeconds}s; JSON is written only by a full run)`);
}

module.exports = { evaluateWsb, REAL_GRID, loadNab, evaluateReal, leaveOneFileOut, loadRealSeries, scoreRealFile, realSummary, evaluateSurge, evaluateVelocity, evaluateRising, generateSurge, surgeConfig, velocityConfig, printTable };

if (require.main === module) main();
