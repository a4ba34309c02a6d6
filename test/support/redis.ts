import { execSync } from 'node:child_process';
import Redis from 'ioredis';

/**
 * The Redis suites use the local server (as CI does). Started when it is down; without it they are
 * skipped with a loud warning, except under CI=true, where that fails the run.
 */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function ping(): Promise<boolean> {
  const client = new Redis(TEST_REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null, connectTimeout: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** For global-setup: ping, else start the server the way .ci/run does, else warn (or fail in CI). */
export async function ensureRedis(): Promise<boolean> {
  if (await ping()) return true;
  try {
    execSync('mkdir -p /var/lib/redis /var/log/redis', { stdio: 'ignore' });
    execSync('redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log', {
      stdio: 'ignore',
    });
    for (let i = 0; i < 30; i++) {
      if (await ping()) return true;
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch {
    /* reported below */
  }
  if (process.env.CI === 'true') throw new Error(`Redis is required in CI but ${TEST_REDIS_URL} is unreachable and could not be started`);
  console.warn(
    `\n\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n` +
      `!! Redis at ${TEST_REDIS_URL} is unreachable: the shared rate-limit (Redis) suite is SKIPPED.\n` +
      `!! Start it with: redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no\n` +
      `!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n`,
  );
  return false;
}

/** Set by global-setup (TRENDHOOKS_TEST_REDIS). */
export function redisAvailable(): boolean {
  return process.env.TRENDHOOKS_TEST_REDIS !== '0';
}
