'use strict';
/**
 * False alarms per subreddit-week and recall of trends.velocity and trends.rising on generated data
 * whose noise is calibrated to the burstiness of the real labelled mention-count series.
 *
 *   node bench/detectors/calibrated.js [--dist=dist/trends/detectors] [--data=../shared/data/nab-realtweets] [--weeks=8] [--seed=42]
 *     [--velocity='{"threshold":6}'] [--rising='{…}']   (parameter overrides, for tuning)
 *
 * 1. Calibration. Each real series is summed to 30-minute buckets (velocity's width). Outside the
 *    labelled windows, each bucket's local level m is the mean of the 12 buckets around it (±3 h,
 *    itself excluded), and the negative-binomial excess φ (variance = m + φ·m²) is estimated by
 *    moments: φ = Σ((c − m)² − m) / Σ m². The daily and weekly rhythms are the mean count per
 *    hour-of-day and per day-of-week over the overall mean. Reported per file; the median φ and the
 *    mean rhythm drive the generator.
 * 2. trends.velocity. A subreddit of ~300 posts per 30 min (× the real rhythm) with 200 keywords
 *    (shares 0.2–20 %, Zipf): each keyword's count is Poisson(n · share · G), G ~ Gamma(1/φ, φ), i.e.
 *    negative-binomial with the real φ. Labelled bursts multiply one keyword's share by 3, 5 or 10
 *    for 1–6 buckets (about 3 per week). A burst is caught if its keyword fires from its first bucket
 *    to one bucket after its last; any other event is a false alarm.
 * 3. trends.rising. Posts arrive with the same rhythm and NB burstiness (~20 posts/h); each grows to a
 *    lognormal final score (median 7, σ 1.5) with a 1–4 h time constant; 0.5 % are labelled risers
 *    whose final score is 30–100× larger and reached within 1 h. The poller re-reads every post every
 *    15 minutes. A riser is caught if it fires while under 3 h old; a fire on any other post is a
 *    false alarm.
 */
const fs = require('node:fs');
const path = require('node:path');
const L = require('./lib');

const argv = process.argv.slice(2);
const det = L.loadDetectors(argv);
const DATA = path.resolve(L.flag(argv, 'data', path.join(__dirname, '../../../shared/data/nab-realtweets')));
const WEEKS = Number(L.flag(argv, 'weeks', '8'));
const SEED = Number(L.flag(argv, 'seed', '42'));
const VELOCITY_PARAMS = JSON.parse(L.flag(argv, 'velocity', '{}'));
const RISING_PARAMS = JSON.parse(L.flag(argv, 'rising', '{}'));
const HALF_HOUR = 30 * L.MINUTE;
const WEEK = 7 * L.DAY;

function calibrate() {
  const windows = JSON.parse(fs.readFileSync(path.join(DATA, 'windows.json'), 'utf8'));
  const files = [];
  const hourSum = new Array(24).fill(0);
  const daySum = new Array(7).fill(0);
  for (const name of Object.keys(windows).sort()) {
    const series = det.parseSeriesCsv(fs.readFileSync(path.join(DATA, name), 'utf8'));
    const wins = det.parseLabelWindows(fs.readFileSync(path.join(DATA, 'windows.json'), 'utf8'), name);
    const byBucket = new Map();
    for (const p of series) {
      const b = Math.floor(p.timestamp / HALF_HOUR) * HALF_HOUR;
      byBucket.set(b, (byBucket.get(b) ?? 0) + p.value);
    }
    const starts = [...byBucket.keys()].sort((a, b) => a - b);
    const counts = starts.map((s) => byBucket.get(s));
    const inWindow = starts.map((s) => wins.some((w) => s + HALF_HOUR > w.startMs && s <= w.endMs));
    let num = 0;
    let den = 0;
    let total = 0;
    const hour = new Array(24).fill(0);
    const hourN = new Array(24).fill(0);
    const day = new Array(7).fill(0);
    const dayN = new Array(7).fill(0);
    for (let i = 6; i < counts.length - 6; i++) {
      if (inWindow[i]) continue;
      let m = 0;
      for (let j = i - 6; j <= i + 6; j++) if (j !== i) m += counts[j];
      m /= 12;
      num += (counts[i] - m) ** 2 - m;
      den += m * m;
      total += counts[i];
      const d = new Date(starts[i]);
      hour[d.getUTCHours()] += counts[i];
      hourN[d.getUTCHours()]++;
      day[d.getUTCDay()] += counts[i];
      dayN[d.getUTCDay()]++;
    }
    const mean = total / hourN.reduce((a, b) => a + b, 0);
    for (let h = 0; h < 24; h++) hourSum[h] += hour[h] / hourN[h] / mean;
    for (let d = 0; d < 7; d++) daySum[d] += day[d] / dayN[d] / mean;
    files.push({ file: name, meanPer30min: L.round(mean, 1), phi: L.round(num / den, 4), cv: L.round(Math.sqrt(Math.max(num / den, 0)), 3) });
  }
  const phis = files.map((f) => f.phi).sort((a, b) => a - b);
  const phi = phis[Math.floor(phis.length / 2)];
  return {
    files,
    phi,
    hourProfile: hourSum.map((x) => L.round(x / files.length, 3)),
    dayProfile: daySum.map((x) => L.round(x / files.length, 3)),
  };
}

function rhythm(cal, t) {
  const d = new Date(t);
  return cal.hourProfile[d.getUTCHours()] * cal.dayProfile[d.getUTCDay()];
}

/** Poisson(mean · G), G ~ Gamma(1/φ, scale φ): negative binomial with variance mean + φ·mean². */
function nb(rng, mean, phi) {
  if (mean <= 0) return 0;
  return L.poisson(rng, phi > 0 ? mean * L.gamma(rng, 1 / phi) * phi : mean);
}

function velocityRun(cal, seed) {
  const rng = L.rngFrom(seed);
  const KEYWORDS = 200;
  const shares = Array.from({ length: KEYWORDS }, (_, r) => Math.min(0.2, 0.2 / (r + 1) ** 0.9 + 0.002));
  const start = Date.UTC(2024, 0, 1);
  const buckets = (WEEKS * WEEK) / HALF_HOUR;
  // Bursts: after the first day, about 3 per week, never two on one keyword at once.
  const bursts = [];
  for (let b = 48; b < buckets - 8; ) {
    b += 8 + Math.floor(rng() * 100);
    if (b >= buckets - 8) break;
    bursts.push({ kw: Math.floor(rng() * KEYWORDS), from: b, to: b + Math.floor(rng() * 6), lift: [3, 5, 10][Math.floor(rng() * 3)] });
  }
  const state = det.createVelocityState(VELOCITY_PARAMS);
  const events = [];
  for (let b = 0; b < buckets; b++) {
    const t = start + b * HALF_HOUR;
    const n = Math.max(1, nb(rng, 300 * rhythm(cal, t), cal.phi));
    const counts = new Map();
    for (let k = 0; k < KEYWORDS; k++) {
      const burst = bursts.find((x) => x.kw === k && b >= x.from && b <= x.to);
      const share = Math.min(1, shares[k] * (burst ? burst.lift : 1));
      const c = Math.min(n, nb(rng, n * share, cal.phi));
      if (c > 0) counts.set(`kw${k}`, c);
    }
    for (const d of det.observeVelocityCounts(state, t, n, counts)) events.push({ kw: Number(d.keyword.slice(2)), b });
  }
  const caught = new Set();
  let falseAlarms = 0;
  for (const e of events) {
    const i = bursts.findIndex((x) => x.kw === e.kw && e.b >= x.from && e.b <= x.to + 1);
    if (i >= 0) caught.add(i);
    else falseAlarms++;
  }
  const byLift = {};
  for (const lift of [3, 5, 10]) {
    const of = bursts.map((x, i) => [x, i]).filter(([x]) => x.lift === lift);
    byLift[`recall ${lift}x`] = of.length ? L.round(of.filter(([, i]) => caught.has(i)).length / of.length, 3) : null;
  }
  return { weeks: WEEKS, bursts: bursts.length, events: events.length, falseAlarms, falseAlarmsPerWeek: L.round(falseAlarms / WEEKS, 3), recall: L.round(caught.size / bursts.length, 3), ...byLift };
}

function risingRun(cal, seed) {
  const rng = L.rngFrom(seed);
  const state = det.createRisingState(RISING_PARAMS);
  const start = Date.UTC(2024, 0, 1);
  const posts = [];
  for (let t = start; t < start + WEEKS * WEEK; t += HALF_HOUR) {
    const n = nb(rng, 10 * rhythm(cal, t), cal.phi);
    for (let i = 0; i < n; i++) {
      const riser = rng() < 0.005;
      posts.push({
        id: `p${posts.length}`,
        created: t + rng() * HALF_HOUR,
        q: Math.exp(2 + 1.5 * L.normal(rng)) * (riser ? 30 + 70 * rng() : 1),
        tau: riser ? (0.3 + 0.7 * rng()) * L.HOUR : (1 + 3 * rng()) * L.HOUR,
        riser,
      });
    }
  }
  const obs = [];
  for (const p of posts) for (let a = 5 * L.MINUTE + rng() * 10 * L.MINUTE; a < 12 * L.HOUR; a += 15 * L.MINUTE) obs.push([p.created + a, p]);
  obs.sort((x, y) => x[0] - y[0]);
  const fired = new Map();
  for (const [t, p] of obs) {
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
  const risers = posts.filter((p) => p.riser);
  const caught = risers.filter((p) => fired.has(p.id) && fired.get(p.id).ageMinutes <= 180);
  const falseAlarms = [...fired.keys()].filter((id) => !posts[Number(id.slice(1))].riser).length;
  const ages = caught.map((p) => fired.get(p.id).ageMinutes).sort((a, b) => a - b);
  return {
    weeks: WEEKS,
    posts: posts.length,
    risers: risers.length,
    events: fired.size,
    falseAlarms,
    falseAlarmsPerWeek: L.round(falseAlarms / WEEKS, 3),
    recall: L.round(caught.length / risers.length, 3),
    medianAgeMinutes: L.quantile(ages, 0.5),
  };
}

function main() {
  const cal = calibrate();
  console.log(`calibration on ${cal.files.length} real series, 30-minute buckets outside labelled windows:`);
  console.table(cal.files);
  console.log(`median NB excess φ = ${cal.phi} (variance = m + φ·m²); hour-of-day rhythm ${Math.min(...cal.hourProfile)}–${Math.max(...cal.hourProfile)}, day-of-week ${Math.min(...cal.dayProfile)}–${Math.max(...cal.dayProfile)}`);
  const velocity = [0, 1, 2].map((i) => velocityRun(cal, SEED * 10 + i));
  console.log(`\ntrends.velocity, 3 subreddits × ${WEEKS} weeks (parameters: defaults${Object.keys(VELOCITY_PARAMS).length ? ' + ' + JSON.stringify(VELOCITY_PARAMS) : ''}):`);
  console.table(velocity);
  const rising = [0, 1, 2].map((i) => risingRun(cal, SEED * 10 + 100 + i));
  console.log(`\ntrends.rising, 3 subreddits × ${WEEKS} weeks (parameters: defaults${Object.keys(RISING_PARAMS).length ? ' + ' + JSON.stringify(RISING_PARAMS) : ''}):`);
  console.table(rising);
  const sum = (xs, k) => xs.reduce((a, x) => a + x[k], 0);
  console.log(
    `\nsummary: velocity ${L.round(sum(velocity, 'falseAlarms') / (3 * WEEKS), 2)} false alarms per subreddit-week, recall ${L.round(
      velocity.reduce((a, x) => a + x.recall * x.bursts, 0) / sum(velocity, 'bursts'),
      3,
    )}; rising ${L.round(sum(rising, 'falseAlarms') / (3 * WEEKS), 2)} false alarms per subreddit-week, recall ${L.round(
      rising.reduce((a, x) => a + x.recall * x.risers, 0) / sum(rising, 'risers'),
      3,
    )}`,
  );
}

main();
