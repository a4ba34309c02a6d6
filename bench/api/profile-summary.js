'use strict';
/**
 * Self time of a V8 `.cpuprofile` (from `node --cpu-prof`), grouped by function and by module
 * (an npm package, trendhooks' own dist/, node's internals, GC). Idle time is left out of the
 * percentages: they say where the busy time went.
 *
 *   node bench/api/profile-summary.js <file.cpuprofile> [--top=10]
 */
const fs = require('node:fs');
const path = require('node:path');

/** Which module a frame's script belongs to. */
function moduleOf(url, functionName) {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return 'trendhooks ' + path.dirname(url.slice(dist + 1));
  return url.replace(/^file:\/\//, '');
}

function shortUrl(url) {
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

/** { totalMs (busy), idleMs, byFunction: [{name, ms, pct}], byModule: [{name, ms, pct}] } */
function summarise(profile, top = 10) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const { samples, timeDeltas } = profile;
  // timeDeltas[i] is the time before sample i; attribute the interval to the sample that ends it.
  for (let i = 0; i < samples.length; i++) self.set(samples[i], (self.get(samples[i]) ?? 0) + (timeDeltas[i] ?? 0));
  const byFn = new Map();
  const byMod = new Map();
  let idle = 0;
  let busy = 0;
  for (const [id, us] of self) {
    const { callFrame: f } = nodes.get(id);
    if (f.functionName === '(idle)') {
      idle += us;
      continue;
    }
    busy += us;
    const fn = `${f.functionName || '(anonymous)'} ${f.url ? `${shortUrl(f.url)}:${f.lineNumber + 1}` : ''}`.trim();
    byFn.set(fn, (byFn.get(fn) ?? 0) + us);
    const mod = moduleOf(f.url, f.functionName);
    byMod.set(mod, (byMod.get(mod) ?? 0) + us);
  }
  const rank = (m) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: Math.round(us / 100) / 10, pct: Math.round((us / busy) * 1000) / 10 }));
  return { busyMs: Math.round(busy / 1000), idleMs: Math.round(idle / 1000), byFunction: rank(byFn), byModule: rank(byMod) };
}

function format(s) {
  const lines = [`busy ${s.busyMs} ms (idle ${s.idleMs} ms left out)`, 'by module (self time):'];
  for (const x of s.byModule) lines.push(`  ${String(x.ms).padStart(8)} ms ${String(x.pct).padStart(5)} %  ${x.name}`);
  lines.push('by function (self time):');
  for (const x of s.byFunction) lines.push(`  ${String(x.ms).padStart(8)} ms ${String(x.pct).padStart(5)} %  ${x.name}`);
  return lines.join('\n');
}

module.exports = { summarise, format };

if (require.main === module) {
  const file = process.argv[2];
  const topArg = process.argv.find((a) => a.startsWith('--top='));
  if (!file) {
    console.error('usage: node bench/api/profile-summary.js <file.cpuprofile> [--top=10]');
    process.exit(2);
  }
  console.log(format(summarise(JSON.parse(fs.readFileSync(file, 'utf8')), topArg ? Number(topArg.slice(6)) : 10)));
}
