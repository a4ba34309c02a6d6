import { execSync } from 'node:child_process';
import { isPgAvailable } from './databases';

/** Makes sure PostgreSQL is up (starting the local cluster if it is down) before the e2e suites run. */
export default async function globalSetup(): Promise<void> {
  if (process.env.TRENDHOOKS_TEST_PG) return;
  let ok = false;
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
  ok = await isPgAvailable();
  process.env.TRENDHOOKS_TEST_PG = ok ? '1' : '0';
}
