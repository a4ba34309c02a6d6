import { execFile } from 'node:child_process';
import { Pool } from 'undici';
import { CLI } from './processes';

/** One HTTP exchange of the load, as the client saw it. */
export interface Exchange {
  op: string;
  /** ms since the load's epoch: sent, answered. */
  t0: number;
  t1: number;
  status: number;
  /** What was wrong with it, if anything (a 5xx other than a clean 503, a bad envelope, a transport error, an unexpected status). */
  problem?: string;
  body?: any;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

/** A keep-alive HTTP client for the API process. */
export class ApiClient {
  private readonly pool: Pool;

  constructor(readonly port: number) {
    this.pool = new Pool(`http://127.0.0.1:${port}`, { connections: 16, headersTimeout: 45_000, bodyTimeout: 45_000 });
  }

  async call(method: string, path: string, opts: { auth?: string; body?: unknown } = {}): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (opts.auth) headers.authorization = `Bearer ${opts.auth}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await this.pool.request({ method: method as 'GET', path, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    const text = await res.body.text();
    let body: any;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.statusCode, headers: res.headers, body, text };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/**
 * What a client may be answered while the database is away: the expected success, or a clean
 * 503 SERVICE_UNAVAILABLE (error envelope, request id echoed, Retry-After: 1). Anything else is
 * a problem, described.
 */
export function judge(res: Answer, expected: number): string | undefined {
  const rid = res.headers['x-request-id'];
  if (res.status === expected) {
    if (!rid) return `${res.status} without X-Request-Id`;
    return undefined;
  }
  if (res.status === 503) {
    const e = res.body?.error;
    if (!e || e.code !== 'SERVICE_UNAVAILABLE' || typeof e.message !== 'string' || e.request_id !== rid) return `503 without the SERVICE_UNAVAILABLE envelope: ${res.text.slice(0, 200)}`;
    if (res.headers['retry-after'] !== '1') return `503 without Retry-After: 1 (got ${String(res.headers['retry-after'])})`;
    if (/ECONN|SQLITE|57P0|terminat|locked|SELECT|INSERT/i.test(res.text)) return `503 leaks internals: ${res.text.slice(0, 200)}`;
    return undefined;
  }
  return `expected ${expected} or a clean 503, got ${res.status}: ${res.text.slice(0, 200)}`;
}

/** `node dist/cli.js …` with these environment variables; never rejects. */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, ...env }, timeout: timeoutMs }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : null) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Counts of the exchanges in flight at some point of [from, to) (all by default). */
export function tally(log: Exchange[], from = 0, to = Infinity) {
  const inWindow = log.filter((x) => x.t1 >= from && x.t0 < to);
  return {
    requests: inWindow.length,
    ok: inWindow.filter((x) => x.status >= 200 && x.status < 300).length,
    unavailable: inWindow.filter((x) => x.status === 503).length,
    problems: inWindow.filter((x) => x.problem !== undefined),
  };
}
