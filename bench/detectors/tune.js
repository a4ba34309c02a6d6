'use strict';
/**
 * Grid searches used to pick the global defaults.
 *
 *   node bench/detectors/tune.js surge-real [--real-data=DIR] [--grid='{"threshold":[3,4]}'] [--dist=…]
 *   node bench/detectors/tune.js surge|velocity [--dist=/tmp/det-dist] [--seed=7]
 *
 * surge-real (how the surge defaults were chosen): the labelled real series (see quality.js) scored
 * with the NAB standard profile. Without --grid it prints the defaults and, one knob at a time, the
 * score and false alarms of each neighbouring value (the sensitivity the detectors README quotes);
 * with --grid, every combination, best first, among those with ≤ 1 false alarm per series-week.
 *
 * surge|velocity (generated data, on a different seed than quality.js reports): maximise recall of
 * ≥3× bursts (surge: busy+mid; velocity: bursts with ≥5 expected keyword posts) subject to false
 * alarms ≤ 1 per subreddit-week in EVERY class.
 */
const path = require('node:path');
const L = require('./lib');
const Q = require('./quality');

function product(grid) {
  let combos = [{}];
  for (const [k, values] of Object.entries(grid)) combos = combos.flatMap((c) => values.map((v) => ({ ...c, [k]: v })));
  return combos;
}

function recallOf(results, groups) {
  let bursts = 0;
  let detected = 0;
  for (const g of groups) {
    const r = results[g];
    if (!r || !r.bursts) continue;
    bursts += r.bursts;
    detected += r.recall * r.bursts;
  }
  return bursts ? detected / bursts : 0;
}

function tuneSurge(det, seed, gridArg) {
  const cfg = Q.surgeConfig(false);
  const series = Q.generateSurge(cfg, seed);
  const grid = gridArg ?? {
    threshold: [4, 4.5, 5, 5.5],
    windowBuckets: [1, 3, 6, 12],
    levelHalfLifeBuckets: [6, 12, 24],
    minCount: [3, 5],
    clipZ: [2, 3],
  };
  const rows = [];
  for (const params of product(grid)) {
    const r = Q.evaluateSurge(det, params, cfg, seed, series);
    const strong = ['busy:3x', 'busy:5x', 'busy:10x', 'mid:3x', 'mid:5x', 'mid:10x'];
    rows.push({
      params: JSON.stringify(params),
      recall3plus: L.round(recallOf(r, strong)),
      busy3x: r['busy:3x']?.recall,
      busy2x: r['busy:2x']?.recall,
      mid3x: r['mid:3x']?.recall,
      quiet10x: r['quiet:10x']?.recall,
      allRecall: r.all.recall,
      precision: r.all.precision,
      medDelay: r.all.medianDelayBuckets,
      faWeekBusy: r['class:busy'].falseAlarmsPerWeek,
      faWeekMid: r['class:mid'].falseAlarmsPerWeek,
      faWeekQuiet: r['class:quiet'].falseAlarmsPerWeek,
    });
  }
  return rows;
}

/** One knob at a time around the defaults: the neighbours the README's "why" column quotes. */
const REAL_SENSITIVITY = {
  threshold: [3, 3.5, 4.5, 5],
  minLift: [1.5, 3],
  windowBuckets: [6, 12, 48],
  windowPseudoCount: [3, 8],
  cooldownBuckets: [72, 144, 576],
  levelHalfLifeBuckets: [288, 2016],
  scaleHalfLifeBuckets: [1008, 4032],
  seasonalDays: [3, 14],
  clipZ: [3],
  minCount: [1, 10],
};

function tuneSurgeReal(det, argv, grid) {
  const nab = Q.loadNab(argv);
  const dir = path.resolve(L.flag(argv, 'real-data', path.resolve(__dirname, '../../../shared/data/nab-realtweets')));
  const files = Q.loadRealSeries(det, dir);
  const row = (params) => {
    const scores = files.map((f) => Q.scoreRealFile(det, nab, f, params));
    const s = Q.realSummary(nab, files, scores);
    return { params: JSON.stringify(params), score: s.score, caught: `${s.caught}/${s.windows}`, falseAlarms: s.falseAlarms, perSeriesWeek: s.falseAlarmsPerSeriesWeek, perFile: scores.map((x) => L.round(x.score, 1)).join(' ') };
  };
  if (grid) {
    const rows = product(grid).map(row);
    const ok = rows.filter((r) => r.perSeriesWeek <= 1).sort((a, b) => b.score - a.score);
    console.log(`${rows.length} combinations, ${ok.length} with ≤ 1 false alarm per series-week; best first:`);
    console.table(ok.slice(0, 25));
    return;
  }
  const rows = [{ ...row({}), params: 'defaults' }];
  for (const [k, values] of Object.entries(REAL_SENSITIVITY)) for (const v of values) rows.push(row({ [k]: v }));
  console.log(`NAB standard score on ${files.length} real series: the defaults, then one parameter changed at a time (per-file scores: ${files.map((f) => f.file).join(' ')})`);
  console.table(rows);
}

function main() {
  const argv = process.argv.slice(2);
  const det = L.loadDetectors(argv);
  if (argv[0] === 'surge-real') {
    const g = L.flag(argv, 'grid', null);
    return tuneSurgeReal(det, argv, g ? JSON.parse(g) : undefined);
  }
  const seed = Number(L.flag(argv, 'seed', '7'));
  const kind = argv[0];
  const gridArg = L.flag(argv, 'grid', null);
  const grid = gridArg ? JSON.parse(gridArg) : undefined;
  let rows;
  if (kind === 'surge') rows = tuneSurge(det, seed, grid);
  else if (kind === 'velocity') rows = require('./tune-velocity').tuneVelocity(det, seed, grid);
  else throw new Error('usage: tune.js surge-real|surge|velocity');
  const ok = rows.filter((r) => Math.max(r.faWeekBusy ?? 0, r.faWeekMid ?? 0, r.faWeekQuiet ?? 0) <= 1);
  const sortKey = (r) => r.recall3plus;
  console.log(`${rows.length} combinations, ${ok.length} with FA ≤ 1/week in every class; best first:`);
  console.table(ok.sort((a, b) => sortKey(b) - sortKey(a)).slice(0, 25));
  if (argv.includes('--all')) console.table(rows);
}

if (require.main === module) main();
