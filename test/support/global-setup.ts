import { execSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CHROMIUM, MISSING_BROWSER } from './browser-path';
import { isPgAvailable } from './databases';
import { ensureRedis } from './redis';

const ROOT = path.resolve(__dirname, '../..');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

/** Suites that spawn `node dist/cli.js` (workers, CLI) need dist/ to match src/: rebuild when stale. */
function ensureFreshBuild(): void {
  const cli = path.join(ROOT, 'dist/cli.js');
  if (fs.existsSync(cli) && fs.statSync(cli).mtimeMs >= newestMtime(path.join(ROOT, 'src'))) return;
  execSync('npx tsc -p tsconfig.build.json', { cwd: ROOT, stdio: 'inherit' });
  execSync('node scripts/build-portal.js', { cwd: ROOT, stdio: 'inherit' });
  fs.utimesSync(cli, new Date(), new Date());
}

/** Makes sure PostgreSQL and Redis are up (starting them if they are down) and dist/ is built. */
export default async function globalSetup(): Promise<void> {
  ensureFreshBuild();
  if (!fs.existsSync(CHROMIUM)) {
    // Once, before any suite, rather than each browser suite failing on its own launch.
    console.warn(`\n*** ${MISSING_BROWSER}. They are skipped${process.env.CI === 'true' ? ' (CI=true: a failure)' : ''}. ***\n`);
    process.env.TRENDHOOKS_TEST_BROWSER = '0';
  }
  process.env.TRENDHOOKS_TEST_REDIS ??= (await ensureRedis()) ? '1' : '0';
  if (process.env.TRENDHOOKS_TEST_PG) return;
  try {
    execSync('pg_isready -h 127.0.0.1 -p 5432 -t 2', { stdio: 'ignore' });
  } catch {
    try {
      execSync('pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start', { stdio: 'ignore', shell: '/bin/bash' });
      execSync('pg_isready -h 127.0.0.1 -p 5432 -t 15', { stdio: 'ignore' });
    } catch {
      /* isPgAvailable reports it */
    }
  }
  process.env.TRENDHOOKS_TEST_PG = (await isPgAvailable()) ? '1' : '0';
}
