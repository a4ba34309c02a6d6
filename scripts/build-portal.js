#!/usr/bin/env node
'use strict';
// The customer portal's page (src/portal/page): its TypeScript compiled for the browser (own
// tsconfig: DOM, no Node) and its stylesheet copied, into <outDir>/portal/page. Called by build.js
// and by the tests' global setup; nothing is compiled at `npm start`.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

function buildPortal(outDir = path.join(root, 'dist')) {
  const dest = path.join(outDir, 'portal', 'page');
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(root, 'src/portal/page/tsconfig.json'), '--outDir', dest], { cwd: root, stdio: 'inherit' });
  fs.copyFileSync(path.join(root, 'src/portal/page/portal.css'), path.join(dest, 'portal.css'));
}

module.exports = { buildPortal };
if (require.main === module) buildPortal(process.argv[2]);
