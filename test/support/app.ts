import { INestApplication, LoggerService } from '@nestjs/common';
import request from 'supertest';
import { createApp } from '../../src/app';
import type { Role } from '../../src/app.module';
import type { TrendParams } from '../../src/trends/subreddit-trends';
import type { PollerTuning } from '../../src/trends/trends.options';
import { ApiKeyService } from '../../src/auth/api-key.service';
import type { Plan } from '../../src/auth/plans';
import type { Clock } from '../../src/common/clock';
import { AppConfig, HttpAdapterName, loadConfig } from '../../src/config/config';
import { StaticDnsResolver } from '../../src/ssrf/resolver';
import type { TestDatabase } from './databases';

/** Names the fake DNS knows; anything else does not resolve. */
export const TEST_DNS: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34'],
  'v6.example.com': ['2606:4700:4700::1111'],
  'internal.example.com': ['10.0.0.5'],
  'mixed.example.com': ['93.184.216.34', '192.168.1.20'],
  'rebind.example.com': ['93.184.216.34'],
  // The local HTTPS receiver of the delivery suites (allowed by SSRF_ALLOW_CIDRS=127.0.0.1/32 there).
  'receiver.test': ['127.0.0.1'],
};

/** Collects every log line, so tests can prove secrets and keys never reach the logs. */
export class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  private push(level: string, args: unknown[]) {
    this.lines.push(`${level} ${args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')}`);
  }
  log(...a: unknown[]) { this.push('log', a); }
  error(...a: unknown[]) { this.push('error', a); }
  warn(...a: unknown[]) { this.push('warn', a); }
  debug(...a: unknown[]) { this.push('debug', a); }
  verbose(...a: unknown[]) { this.push('verbose', a); }
  fatal(...a: unknown[]) { this.push('fatal', a); }
}

/** The system clock moved by `offsetMs`: a test jumps ahead (a day, say) and everything, the worker too, sees the same time. */
export class ShiftedClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
}

export interface TestApp {
  app: INestApplication;
  config: AppConfig;
  http: () => ReturnType<typeof request>;
  /** The TEST_DNS map (not consulted with `systemDns`). */
  dns: StaticDnsResolver;
  logs: CapturingLogger;
  /** A fresh customer with one key on `plan`. */
  customer(plan?: Plan): Promise<{ key: string; customerId: string; prefix: string; auth: { Authorization: string } }>;
  close(): Promise<void>;
}

export async function startTestApp(
  db: TestDatabase,
  opts: {
    env?: Record<string, string>;
    patch?: (c: AppConfig) => void;
    role?: Role;
    random?: () => number;
    /** The one clock of every module (see ShiftedClock); the system clock by default. */
    clock?: Clock;
    trendParams?: TrendParams;
    /** The Reddit poller stays off unless asked for (with REDDIT_BASE_URL at a fake): suites never reach the real Reddit. */
    poller?: boolean;
    pollerTuning?: Partial<PollerTuning>;
    /** The HTTP server under Nest (HTTP_ADAPTER); express by default. */
    adapter?: HttpAdapterName;
    /** The real resolver (SystemDnsResolver, configured by the SSRF_DNS_* variables) instead of the TEST_DNS map. */
    systemDns?: boolean;
    /** The standalone JSON logs, written to this stream (then `logs` below stays empty); off by default, so runs stay quiet. */
    jsonLogs?: { write(line: string): void };
  } = {},
): Promise<TestApp> {
  const config = loadConfig({ CURSOR_SECRET: 'e2e-cursor-secret-0123456789abcdefghijklmnop', ...opts.env });
  config.database = await db.create();
  if (opts.adapter) config.http.adapter = opts.adapter;
  opts.patch?.(config);
  const dns = new StaticDnsResolver(TEST_DNS);
  const logs = new CapturingLogger();
  const app = await createApp(config, {
    resolver: opts.systemDns ? undefined : dns,
    logger: logs,
    role: opts.role,
    random: opts.random,
    clock: opts.clock,
    trendParams: opts.trendParams,
    poller: opts.poller ?? false,
    pollerTuning: opts.pollerTuning,
    logs: opts.jsonLogs ? { stream: opts.jsonLogs } : false,
  });
  await app.init();
  // Fastify routes only once its plugins have loaded; supertest drives the bare server.
  if (config.http.adapter === 'fastify') await app.getHttpAdapter().getInstance().ready();
  const server = app.getHttpServer();
  let n = 0;
  return {
    app,
    config,
    dns,
    logs,
    http: () => request(server),
    async customer(plan: Plan = 'business') {
      const issued = await app.get(ApiKeyService).issue(`customer-${process.pid}-${Date.now()}-${n++}`, plan);
      return { key: issued.key, customerId: issued.customer_id, prefix: issued.prefix, auth: { Authorization: `Bearer ${issued.key}` } };
    },
    async close() {
      await app.close();
      await db.drop();
    },
  };
}
