import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { normaliseHost } from './url';

/** Injection token for the DnsResolver used by SsrfPolicy. */
export const DNS_RESOLVER = Symbol('trendhooks:dns-resolver');

export interface DnsResolver {
  /**
   * All A and AAAA addresses of `host` (already normalised: lower case, no trailing dot).
   * Returns [] when the name does not exist or has no addresses; throws only for
   * unexpected failures (timeout, resolver down), which the policy treats as blocked.
   */
  resolve(host: string): Promise<string[]>;
}

/** An unexpected resolution failure (not "no such name"). */
export class DnsResolutionError extends Error {
  constructor(
    readonly host: string,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'DnsResolutionError';
  }
}

export const DEFAULT_DNS_TIMEOUT_MS = 5000;

// getaddrinfo answers meaning "no addresses", as opposed to "could not ask".
const NO_ADDRESS_CODES = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_NODATA', 'NXDOMAIN']);

export type LookupAllFn = (host: string, options: { all: true; verbatim: true }) => Promise<LookupAddress[]>;

export interface SystemDnsResolverOptions {
  /** Give up after this long (default 5000 ms). */
  timeoutMs?: number;
  /** For tests: replaces node:dns/promises lookup. */
  lookup?: LookupAllFn;
}

/**
 * Resolves through the OS (getaddrinfo via dns.lookup with all:true), so /etc/hosts and
 * the system's resolver configuration apply exactly as they would for a plain connect.
 *
 * Caveat: getaddrinfo cannot be cancelled; on timeout we stop waiting, but the lookup
 * keeps its libuv thread-pool slot until the OS gives up.
 */
export class SystemDnsResolver implements DnsResolver {
  private readonly timeoutMs: number;
  private readonly lookupAll: LookupAllFn;

  constructor(options: SystemDnsResolverOptions = {}) {
    const timeoutMs = options.timeoutMs ?? DEFAULT_DNS_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new Error(`dnsTimeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
    }
    this.timeoutMs = timeoutMs;
    this.lookupAll = options.lookup ?? ((host, opts) => dnsLookup(host, opts));
  }

  async resolve(host: string): Promise<string[]> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new DnsResolutionError(host, 'ETIMEOUT', `DNS lookup timed out after ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
    });
    try {
      const answers = await Promise.race([this.lookupAll(host, { all: true, verbatim: true }), timeout]);
      return dedupe(answers.map((a) => a.address));
    } catch (err) {
      if (err instanceof DnsResolutionError) throw err;
      const code = (err as NodeJS.ErrnoException | undefined)?.code ?? 'EUNKNOWN';
      if (NO_ADDRESS_CODES.has(code)) return [];
      throw new DnsResolutionError(host, code, `DNS lookup failed (${code})`);
    } finally {
      clearTimeout(timer);
    }
  }
}

export interface StaticDnsResolverOptions {
  /** Asked for names not in the map (e.g. SystemDnsResolver); otherwise they resolve to []. */
  fallback?: DnsResolver;
}

/**
 * A fixed host → addresses map for tests and e2e suites. Names are matched normalised
 * (case-insensitive, trailing dot ignored). `set` lets a test simulate DNS changing
 * between webhook creation and delivery (rebinding).
 */
export class StaticDnsResolver implements DnsResolver {
  private readonly entries = new Map<string, readonly string[]>();

  constructor(
    entries: Record<string, readonly string[]> | Iterable<readonly [string, readonly string[]]> = {},
    private readonly options: StaticDnsResolverOptions = {},
  ) {
    const pairs = Symbol.iterator in entries ? entries : Object.entries(entries);
    for (const [host, addresses] of pairs as Iterable<readonly [string, readonly string[]]>) {
      this.set(host, addresses);
    }
  }

  set(host: string, addresses: readonly string[]): this {
    this.entries.set(normaliseHost(host), [...addresses]);
    return this;
  }

  delete(host: string): this {
    this.entries.delete(normaliseHost(host));
    return this;
  }

  async resolve(host: string): Promise<string[]> {
    const found = this.entries.get(normaliseHost(host));
    if (found) return [...found];
    return this.options.fallback ? this.options.fallback.resolve(host) : [];
  }
}

function dedupe(addresses: string[]): string[] {
  return [...new Set(addresses)];
}
