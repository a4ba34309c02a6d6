'use strict';
/**
 * Grid search used ONCE to pick the global defaults (on a different seed than quality.js reports).
 *
 *   node bench/detectors/tune.js surge|velocity [--dist=/tmp/det-dist] [--seed=7]
 *
 * Objective: maximise recall of ≥3× bursts (surge: busy+mid; velocity: bursts with ≥5 expected
 * keyword posts) subject to false alarms ≤ 1 per subreddit-week in EVERY class.
 */
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

function main() {
  const argv = process.argv.slice(2);
  const det = L.loadDetectors(argv);
  const seed = Number(L.flag(argv, 'seed', '7'));
  const kind = argv[0];
  const gridArg = L.flag(argv, 'grid', null);
  const grid = gridArg ? JSON.parse(gridArg) : undefined;
  let rows;
  if (kind === 'surge') rows = tuneSurge(det, seed, grid);
  else if (kind === 'velocity') rows = require('./tune-velocity').tuneVelocity(det, seed, grid);
  else throw new Error('usage: tune.js surge|velocity');
  const ok = rows.filter((r) => Math.max(r.faWeekBusy ?? 0, r.faWeekMid ?? 0, r.faWeekQuiet ?? 0) <= 1);
  const sortKey = (r) => r.recall3plus;
  console.log(`${rows.length} combinations, ${ok.length} with FA ≤ 1/week in every class; best first:`);
  console.table(ok.sort((a, b) => sortKey(b) - sortKey(a)).slice(0, 25));
  if (argv.includes('--all')) console.table(rows);
}

if (require.main === module) main();
