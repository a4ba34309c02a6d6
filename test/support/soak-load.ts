import * as fs from 'node:fs';
import * as net from 'node:net';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

/**
 * The soak suite's load generator: a mixed workload of the public API over one undici pool, run
 * closed-loop (to measure capacity) or open-loop at a fixed rate (the soak itself), with every
 * answer checked against the status its request calls for and the error envelope.
 */

export interface SoakCustomer {
  auth: string;
  /** Seeded webhooks that are never deleted: GET one and its deliveries always answer 200. */
  stable: string[];
  /**
   * Webhooks this run created and will delete. With those being created and those being deleted
   * (the quota counts them until their DELETE is served), bounded to stay far below the quota.
   */
  churn: string[];
  creating: number;
  deleting: number;
  listCursor: string | null;
  /** Cursors are bound to the customer they were issued to. */
  postsCursor: string | null;
  deliveriesCursor: { id: string; cursor: string } | null;
}

export interface SoakFixture {
  customers: SoakCustomer[];
  /** A free-plan key with a low per-minute limit: its 429s are expected, not errors. */
  freeAuth: string;
  postsSubreddit: string;
  authors: string[];
  /** The destination of created webhooks (allowed by the API process's SSRF_ALLOW_CIDRS). */
  createUrl: string;
}

interface Op {
  kind: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  auth?: string;
  body?: string;
  /** Statuses this request may answer; anything else is counted as unexpected. */
  expect: readonly number[];
  /** Called with the parsed body of a 2xx answer (cursors, created ids). */
  then?: (body: any) => void;
  /** Called once the request is over, whatever happened (quota bookkeeping). */
  done?: () => void;
}

/** Weights of the mix (percent of requests). */
export const MIX: Record<string, number> = {
  healthz: 5,
  'webhooks.list': 14,
  'webhooks.list.next': 12,
  'webhooks.get': 18,
  'webhooks.get.missing': 3,
  'webhooks.create|delete': 12,
  'deliveries.list': 12,
  'deliveries.list.next': 4,
  'subreddit.posts': 8,
  'subreddit.posts.next': 5,
  'user.posts': 5,
  'subreddit.posts.free-plan': 2,
};

/** At most this many created-and-not-yet-deleted webhooks per customer (business quota: 100). */
const CHURN_MAX = 20;
const MISSING_ID = '01ARZ3NDEKTSV4RRFFQ69G5FAV';

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];

export class SoakWorkload {
  private readonly table: string[] = [];

  constructor(private readonly f: SoakFixture) {
    for (const [kind, w] of Object.entries(MIX)) for (let i = 0; i < w; i++) this.table.push(kind);
  }

  next(): Op {
    const c = pick(this.f.customers);
    const kind = pick(this.table);
    switch (kind) {
      case 'healthz':
        return { kind, method: 'GET', path: '/healthz', expect: [200] };
      case 'webhooks.list.next':
      case 'webhooks.list': {
        const cursor = kind === 'webhooks.list.next' && c.listCursor ? `&cursor=${encodeURIComponent(c.listCursor)}` : '';
        return { kind, method: 'GET', path: `/v1/webhooks?limit=10${cursor}`, auth: c.auth, expect: [200], then: (b) => (c.listCursor = b.meta.page.next_cursor) };
      }
      case 'webhooks.get':
        return { kind, method: 'GET', path: `/v1/webhooks/${pick(c.stable)}`, auth: c.auth, expect: [200] };
      case 'webhooks.get.missing':
        return { kind, method: 'GET', path: `/v1/webhooks/${MISSING_ID}`, auth: c.auth, expect: [404] };
      case 'webhooks.create|delete': {
        // Deletes in flight count too: with the server's queue seconds long at a high rate, dozens
        // of a customer's DELETEs could wait there while new creates went out, past the quota.
        const full = c.churn.length + c.creating + c.deleting >= CHURN_MAX;
        if (c.churn.length > 0 && (full || Math.random() < 0.5)) {
          const id = c.churn.shift()!;
          c.deleting++;
          return { kind: 'webhooks.delete', method: 'DELETE', path: `/v1/webhooks/${id}`, auth: c.auth, expect: [204], done: () => c.deleting-- };
        }
        // Every churned webhook is being created or deleted: a read instead, until some are served.
        if (full) return { kind: 'webhooks.get', method: 'GET', path: `/v1/webhooks/${pick(c.stable)}`, auth: c.auth, expect: [200] };
        c.creating++;
        return {
          kind: 'webhooks.create',
          method: 'POST',
          path: '/v1/webhooks',
          auth: c.auth,
          body: JSON.stringify({ url: this.f.createUrl, event: pick(['trends.surge', 'trends.velocity', 'trends.rising']), subreddit: 'soakchurn' }),
          expect: [201],
          then: (b) => c.churn.push(b.data.id),
          done: () => c.creating--,
        };
      }
      case 'deliveries.list.next':
      case 'deliveries.list': {
        const page = (id: string, cursor?: string): Op => ({
          kind,
          method: 'GET',
          path: `/v1/webhooks/${id}/deliveries?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          auth: c.auth,
          expect: [200],
          then: (b) => (c.deliveriesCursor = b.meta.page.next_cursor ? { id, cursor: b.meta.page.next_cursor } : null),
        });
        return kind === 'deliveries.list.next' && c.deliveriesCursor ? page(c.deliveriesCursor.id, c.deliveriesCursor.cursor) : page(pick(c.stable));
      }
      case 'subreddit.posts.next':
      case 'subreddit.posts': {
        const cursor = kind === 'subreddit.posts.next' && c.postsCursor ? `&cursor=${encodeURIComponent(c.postsCursor)}` : '';
        return { kind, method: 'GET', path: `/v1/subreddits/${this.f.postsSubreddit}/posts?limit=20${cursor}`, auth: c.auth, expect: [200], then: (b) => (c.postsCursor = b.meta.page.next_cursor) };
      }
      case 'user.posts':
        return { kind, method: 'GET', path: `/v1/users/${pick(this.f.authors)}/posts?limit=10`, auth: c.auth, expect: [200] };
      case 'subreddit.posts.free-plan':
        return { kind, method: 'GET', path: `/v1/subreddits/${this.f.postsSubreddit}/posts?limit=10`, auth: this.f.freeAuth, expect: [200, 429] };
      default:
        throw new Error(`unknown kind ${kind}`);
    }
  }
}

export class LoadStats {
  requests = 0;
  /** Requests that never got a whole answer, by error code (socket errors, timeouts). */
  readonly errors: Record<string, number> = {};
  readonly byStatus: Record<number, number> = {};
  readonly byKind: Record<string, Record<number, number>> = {};
  /** Answers with a status their request does not call for (first few kept). */
  unexpected = 0;
  readonly unexpectedSamples: string[] = [];
  /** Non-2xx answers without the error envelope, or without a matching X-Request-Id (first few kept). */
  badEnvelopes = 0;
  readonly badEnvelopeSamples: string[] = [];
  readonly latenciesMs: number[] = [];
  /** Open loop only: arrivals not sent because too many requests were already in flight. */
  skipped = 0;

  count(code: Record<string, number>, key: string | number) {
    code[key] = (code[key] ?? 0) + 1;
  }

  get fivexx(): number {
    return Object.entries(this.byStatus).reduce((n, [s, k]) => n + (Number(s) >= 500 ? k : 0), 0);
  }

  get errorCount(): number {
    return Object.values(this.errors).reduce((a, b) => a + b, 0);
  }

  get non2xx(): Record<string, number> {
    return Object.fromEntries(Object.entries(this.byStatus).filter(([s]) => Number(s) < 200 || Number(s) >= 300));
  }

  percentile(p: number): number {
    if (this.latenciesMs.length === 0) return NaN;
    const s = Float64Array.from(this.latenciesMs).sort();
    return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10;
  }
}

function expectedErrorCode(status: number): string | undefined {
  return ({ 404: 'NOT_FOUND', 429: 'RATE_LIMITED' } as Record<number, string>)[status];
}

/** One keep-alive pool to the API process; counts connections the server dropped. */
export class LoadClient {
  readonly pool: Pool;
  /** Connections closed by the other side or by an error (not by our idle timeout or close()). */
  dropped = 0;
  readonly droppedSamples: string[] = [];
  connectionErrors = 0;
  private closing = false;

  constructor(
    origin: string,
    connections: number,
    timeoutMs = 15_000,
  ) {
    this.pool = new Pool(origin, { connections, pipelining: 1, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connectTimeout: timeoutMs });
    this.pool.on('disconnect', (_origin, _targets, err) => {
      // undici closes idle sockets itself before the server's Keep-Alive timeout (UND_ERR_INFO).
      if (this.closing || (err as { code?: string })?.code === 'UND_ERR_INFO') return;
      this.dropped++;
      if (this.droppedSamples.length < 5) this.droppedSamples.push(`${(err as { code?: string })?.code ?? ''} ${err?.message}`);
    });
    this.pool.on('connectionError', () => this.connectionErrors++);
  }

  async exec(op: Op, stats: LoadStats): Promise<void> {
    const started = performance.now();
    stats.requests++;
    try {
      const headers: Record<string, string> = {};
      if (op.auth) headers.authorization = op.auth;
      if (op.body) headers['content-type'] = 'application/json';
      const res = await this.pool.request({ path: op.path, method: op.method, headers, body: op.body });
      const text = await res.body.text();
      stats.latenciesMs.push(performance.now() - started);
      const status = res.statusCode;
      stats.count(stats.byStatus, status);
      stats.count((stats.byKind[op.kind] ??= {}), status);
      if (!op.expect.includes(status)) {
        stats.unexpected++;
        if (stats.unexpectedSamples.length < 5) stats.unexpectedSamples.push(`${op.method} ${op.path} -> ${status} ${text.slice(0, 200)}`);
      }
      const rid = res.headers['x-request-id'];
      if (status >= 300) {
        let body: any;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        const e = body?.error;
        const wantCode = expectedErrorCode(status);
        const ok =
          e && typeof e.code === 'string' && typeof e.message === 'string' && typeof rid === 'string' && e.request_id === rid &&
          (wantCode === undefined || e.code === wantCode) && (status !== 429 || res.headers['retry-after'] !== undefined);
        if (!ok) {
          stats.badEnvelopes++;
          if (stats.badEnvelopeSamples.length < 5) stats.badEnvelopeSamples.push(`${op.method} ${op.path} -> ${status} x-request-id=${rid} ${text.slice(0, 200)}`);
        }
      } else if (op.then && status !== 204) {
        op.then(JSON.parse(text));
      }
    } catch (err) {
      const e = err as { code?: string; name?: string };
      stats.count(stats.errors, e.code ?? e.name ?? 'unknown');
    } finally {
      op.done?.();
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.pool.close();
  }
}

/**
 * Closed loop: `concurrency` requests always in flight for `seconds`. Returns the mean rate and the
 * median of the per-second rates (a burst of other work on the machine moves the mean, not the median).
 */
export async function runClosedLoop(client: LoadClient, work: SoakWorkload, stats: LoadStats, concurrency: number, seconds: number): Promise<{ mean: number; median: number }> {
  const started = performance.now();
  const end = started + seconds * 1000;
  const perSecond = new Array<number>(seconds).fill(0);
  const loop = async () => {
    while (performance.now() < end) {
      await client.exec(work.next(), stats);
      const at = Math.floor((performance.now() - started) / 1000);
      if (at < seconds) perSecond[at]++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return { mean: perSecond.reduce((a, b) => a + b, 0) / seconds, median: median(perSecond) };
}

/**
 * Open loop at `rate` requests per second for `seconds`: arrivals are scheduled on the clock,
 * whatever the answers' pace (an arrival beyond `maxInFlight` is counted as skipped, not sent).
 * Returns the achieved rate: requests answered (or failed) over the whole run's wall time.
 */
export async function runOpenLoop(client: LoadClient, work: SoakWorkload, stats: LoadStats, rate: number, seconds: number, maxInFlight = 512): Promise<number> {
  const started = performance.now();
  const end = started + seconds * 1000;
  const interval = 1000 / rate;
  let next = started;
  let inFlight = 0;
  let finished = 0;
  const pending = new Set<Promise<void>>();
  for (;;) {
    const now = performance.now();
    if (now >= end) break;
    while (next <= now) {
      next += interval;
      if (inFlight >= maxInFlight) {
        stats.skipped++;
        continue;
      }
      inFlight++;
      const p: Promise<void> = client.exec(work.next(), stats).finally(() => {
        inFlight--;
        finished++;
        pending.delete(p);
      });
      pending.add(p);
    }
    await new Promise((r) => setTimeout(r, Math.max(1, Math.min(10, next - performance.now()))));
  }
  await Promise.all(pending);
  return finished / ((performance.now() - started) / 1000);
}

/** VmRSS of a process in KiB, from /proc/<pid>/status. */
export function rssKiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]);
}

export interface RssSample {
  atMs: number;
  kib: number;
}

/** Samples a process's VmRSS every second until stopped. */
export function sampleRss(pid: number): { samples: RssSample[]; stop: () => void } {
  const samples: RssSample[] = [];
  const take = () => {
    try {
      samples.push({ atMs: performance.now(), kib: rssKiB(pid) });
    } catch {
      /* the process is gone; the test notices otherwise */
    }
  };
  take();
  const timer = setInterval(take, 1000);
  return { samples, stop: () => clearInterval(timer) };
}

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** PORT=0 would not tell us the port: take a free one from the OS first. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}
