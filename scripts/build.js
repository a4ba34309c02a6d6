#!/usr/bin/env node
'use strict';
// `npm run build` (and `prepare`): compiles into a fresh folder, then swaps it in for dist/ with two
// renames, so a working dist/ is never removed while the compiler runs (~10 s) — a test or a
// `trendhooks` command running alongside keeps finding dist/cli.js. Files of deleted sources do
// not linger, as they would if tsc wrote into dist/ in place.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const next = path.join(root, `.dist-next-${process.pid}`);
const old = path.join(root, `.dist-old-${process.pid}`);
const dist = path.join(root, 'dist');
try {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', next], { cwd: root, stdio: 'inherit' });
  require('./build-portal').buildPortal(next);
} catch {
  fs.rmSync(next, { recursive: true, force: true });
  process.exit(1);
}
if (fs.existsSync(dist)) fs.renameSync(dist, old);
fs.renameSync(next, dist);
fs.rmSync(old, { recursive: true, force: true });
