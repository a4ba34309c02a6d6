import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import type { DatabaseConfig } from '../../src/database/dialect';
import type { Role } from '../../src/app.module';
import type { TestApp } from './app';
import type { TestCert } from './receiver';

export const CLI = path.resolve(__dirname, '../../dist/cli.js');

/** Runs `dist/cli.js …args` with only PATH and `env`; resolves with its exit code and output. */
export function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += String(d)));
    child.stderr!.on('data', (d) => (stderr += String(d)));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

export function databaseUrl(db: DatabaseConfig): string {
  return db.type === 'sqlite' ? `sqlite:${db.path}` : db.url;
}

export type ServeProcess = ChildProcess & { output: string[] };

/**
 * A real `trendhooks serve --role <role>` process (dist/, rebuilt by global-setup when stale) on the
 * test app's database, trusting the receiver's certificate; stdout and stderr are kept in `output`.
 * The defaults suit delivery tests: short retries and polls, a 1 s attempt timeout.
 */
export function spawnServe(t: TestApp, cert: TestCert, extra: Record<string, string> = {}, role: Role = 'worker'): ServeProcess {
  const child = spawn(process.execPath, [CLI, 'serve', '--role', role], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: databaseUrl(t.config.database),
      CURSOR_SECRET: t.config.cursor.secrets[0],
      SSRF_ALLOW_CIDRS: '127.0.0.1/32',
      DELIVERY_CA_FILE: cert.caFile,
      DELIVERY_RETRY_SCHEDULE: '0.2,0.4,0.8',
      DELIVERY_POLL_INTERVAL_MS: '50',
      DELIVERY_TIMEOUT_MS: '1000',
      DELIVERY_LEASE_MS: '6500',
      DELIVERY_CONCURRENCY: '8',
      ...extra,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  }) as ServeProcess;
  child.output = [];
  child.stdout!.on('data', (d) => child.output.push(String(d)));
  child.stderr!.on('data', (d) => child.output.push(String(d)));
  return child;
}

/** SIGTERM, then SIGKILL after 15 s; resolves once the process has exited. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 15_000)))]);
  clearTimeout(timer);
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** SIGKILL; resolves once the process has exited. */
export async function killProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

/** Polls `fn` every 100 ms until `pred` holds or `timeoutMs` passes; returns the last value. */
export async function pollUntil<T>(fn: () => Promise<T>, pred: (v: T) => boolean, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (pred(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}
