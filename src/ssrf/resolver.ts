import * as fs from 'node:fs';
import { getServers, promises as dnsPromises } from 'node:dns';
import type { RecordWithTtl } from 'node:dns';
import { isIP } from 'node:net';
import { LRUCache } from 'lru-cache';
import { normaliseHost } from './url';

/** The least time a lookup must have left to be worth starting a query for. */
const MIN_QUERY_MS = 250;

/** Injection token for the DnsResolver used by SsrfPolicy. */
export const DNS_RESOLVER = Symbol('trendhooks:dns-resolver');

/**
 * A caller's own bound on its lookups that must wait for the nameservers (a delivery worker's
 * per-customer share of its slots): cache and hosts-file hits and IP literals never enter it.
 */
export interface DnsLookupGate {
  /** The bound, named in the DnsBusyError of a lookup it refuses. */
  readonly limit: number;
  /** A place for one lookup, given back by calling what it returns; null when the bound is reached. */
  enter(): (() => void) | null;
}

/** Who a lookup is for: lookups are bounded per customer, so one customer cannot stall another. */
export interface DnsLookupContext {
  customerId?: string;
  /**
   * With a gate the lookup never waits for a place: when the gate is full, or the customer
   * already has its bound of lookups at the nameservers, it fails at once with DnsBusyError.
   * A delivery attempt holds a worker slot while it waits; it is retried on the schedule instead.
   */
  gate?: DnsLookupGate;
}

export interface DnsResolver {
  /**
   * All A and AAAA addresses of `host` (already normalised: lower case, no trailing dot).
   * Returns [] when the name does not exist or has no addresses; throws only for
   * unexpected failures (timeout, resolver down, too many lookups), which the policy treats
   * as blocked.
   */
  resolve(host: string, context?: DnsLookupContext): Promise<string[]>;
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

/** The customer already has its bound of lookups in flight (and its waiting room is full, or the wait ran out). */
export class DnsBusyError extends DnsResolutionError {
  constructor(
    host: string,
    readonly limit: number,
    /** When a retry may find a free slot: a lookup holds one for at most the DNS timeout. */
    readonly retryAfterSeconds: number,
  ) {
    super(host, 'EDNSBUSY', `too many DNS lookups in progress for this customer (at most ${limit} at once)`);
    this.name = 'DnsBusyError';
  }
}

export const DEFAULT_DNS_TIMEOUT_MS = 5000;
export const DEFAULT_DNS_CACHE_TTL_MS = 60_000;
export const DEFAULT_DNS_NEGATIVE_TTL_MS = 5000;
export const DEFAULT_DNS_CACHE_MAX_ENTRIES = 10_000;
export const DEFAULT_DNS_MAX_CONCURRENT_PER_CUSTOMER = 8;
/** Lookups a customer may have waiting for a slot, per slot; beyond that a lookup is refused at once. */
export const DNS_WAITING_PER_SLOT = 8;

// c-ares answers meaning "no addresses", as opposed to "could not ask".
const NO_ADDRESS_CODES = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_NODATA', 'NXDOMAIN']);

export interface SystemDnsResolverOptions {
  /**
   * Nameservers as `ip`, `ip:port` or `[ipv6]:port` (default: the system's, dns.getServers()
   * when the resolver is built).
   */
  servers?: readonly string[];
  /** The most one lookup takes, waiting for a slot included (default 5000 ms). */
  timeoutMs?: number;
  /** Hosts file read once at construction and answered before DNS (default /etc/hosts; null: none). */
  hostsFile?: string | null;
  /** Upper bound on how long an answer is reused (the record TTL when lower); 0 turns the cache off. Default 60 000 ms. */
  cacheTtlMs?: number;
  /** How long "no such name" and failed lookups (timeout, SERVFAIL) are remembered. Default 5000 ms; 0: not at all. */
  negativeTtlMs?: number;
  /** Most names held in the cache (least recently used dropped first). Default 10 000. */
  cacheMaxEntries?: number;
  /** Most lookups one customer has at the nameservers at once (cache hits do not count). Default 8. */
  maxConcurrentPerCustomer?: number;
}

interface CacheEntry {
  expiresAt: number;
  addresses?: readonly string[];
  error?: DnsResolutionError;
}

/**
 * Resolves with c-ares (`dns.Resolver`: asynchronous sockets, no libuv thread-pool slot) so a
 * nameserver that never answers stalls only the lookups that asked it: each lookup has its own
 * channel, cancelled at the deadline. A and AAAA are asked in parallel; the hosts file is
 * honoured first and IP literals skip DNS. Answers are cached (bounded by the record TTL, a cap
 * and a size limit), no-such-name and failures briefly; lookups of one name in flight at once
 * share one query. Each customer has at most `maxConcurrentPerCustomer` lookups at the
 * nameservers; more wait (within the timeout) in a bounded waiting room, or fail with DnsBusyError.
 * A lookup with a caller's gate (DnsLookupContext.gate) enters it before asking the nameservers and
 * never waits: a full gate or a full bound fails with DnsBusyError at once.
 */
export class SystemDnsResolver implements DnsResolver {
  readonly servers: readonly string[];
  private readonly timeoutMs: number;
  private readonly cacheTtlMs: number;
  private readonly negativeTtlMs: number;
  private readonly hosts: ReadonlyMap<string, readonly string[]>;
  /** Least recently used dropped first. Not a Map trimmed from its front: deleting a Map's oldest keys leaves holes its iteration skips, and with thousands of names each eviction cost microseconds. */
  private readonly cache: LRUCache<string, CacheEntry>;
  private readonly inflight = new Map<string, Promise<string[]>>();
  private readonly slots: KeyedSemaphore;

  constructor(options: SystemDnsResolverOptions = {}) {
    this.timeoutMs = positive('dnsTimeoutMs', options.timeoutMs ?? DEFAULT_DNS_TIMEOUT_MS);
    this.cacheTtlMs = nonNegative('dnsCacheTtlMs', options.cacheTtlMs ?? DEFAULT_DNS_CACHE_TTL_MS);
    this.negativeTtlMs = nonNegative('dnsNegativeTtlMs', options.negativeTtlMs ?? DEFAULT_DNS_NEGATIVE_TTL_MS);
    this.cache = new LRUCache({ max: positiveInt('dnsCacheMaxEntries', options.cacheMaxEntries ?? DEFAULT_DNS_CACHE_MAX_ENTRIES) });
    const perCustomer = positiveInt('dnsMaxConcurrentPerCustomer', options.maxConcurrentPerCustomer ?? DEFAULT_DNS_MAX_CONCURRENT_PER_CUSTOMER);
    this.slots = new KeyedSemaphore(perCustomer, perCustomer * DNS_WAITING_PER_SLOT);
    this.servers = Object.freeze(parseDnsServers(options.servers ?? getServers()));
    if (this.servers.length === 0) throw new Error('the DNS resolver needs at least one nameserver');
    this.hosts = options.hostsFile === null ? new Map() : readHostsFile(options.hostsFile ?? '/etc/hosts');
  }

  async resolve(host: string, context: DnsLookupContext = {}): Promise<string[]> {
    const name = normaliseHost(host);
    if (isIP(name) !== 0) return [name];
    const fromHosts = this.hosts.get(name);
    if (fromHosts) return [...fromHosts];
    const cached = this.cached(name);
    if (cached) return cached();

    const deadline = Date.now() + this.timeoutMs;
    const retryAfterSeconds = Math.ceil(this.timeoutMs / 1000);
    const busy = () => new DnsBusyError(name, this.slots.limit, retryAfterSeconds);
    // Checked before any await: a full gate answers in the caller's own turn, with nothing asked.
    const leave = context.gate ? context.gate.enter() : undefined;
    if (leave === null) throw new DnsBusyError(name, context.gate!.limit, retryAfterSeconds);
    // A slot that frees with almost no time left is no use (the query could only time out): a waiter
    // gives up that much before its deadline and answers busy, so it never races the holders' own timeouts.
    const waitUntil = deadline - Math.min(MIN_QUERY_MS, this.timeoutMs / 4);
    let release: () => void;
    try {
      // With a gate, no waiting room: a deadline already past refuses at once when the bound is full.
      release = await this.slots.acquire(context.customerId ?? '', leave ? 0 : waitUntil, busy);
    } catch (err) {
      leave?.();
      throw err;
    }
    try {
      if (Date.now() >= waitUntil) throw busy();
      // Another lookup of the same name may have filled the cache while this one waited.
      const now = this.cached(name);
      if (now) return now();
      let query = this.inflight.get(name);
      if (!query) {
        // The query ends at its first caller's deadline, so it never outlives the slot it was started under.
        query = this.query(name, deadline).finally(() => this.inflight.delete(name));
        this.inflight.set(name, query);
      }
      return [...(await withDeadline(query, deadline, () => timeoutError(name, this.timeoutMs)))];
    } finally {
      release();
      leave?.();
    }
  }

  /** Names cached right now (for tests and metrics). */
  get cacheSize(): number {
    return this.cache.size;
  }

  private cached(name: string): (() => string[]) | undefined {
    const entry = this.cache.get(name);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.cache.delete(name);
      return undefined;
    }
    return () => {
      if (entry.error) throw entry.error;
      return [...(entry.addresses ?? [])];
    };
  }

  private remember(name: string, ttlMs: number, entry: Omit<CacheEntry, 'expiresAt'>): void {
    if (ttlMs <= 0) return;
    this.cache.set(name, { ...entry, expiresAt: Date.now() + ttlMs });
  }

  /** One A + AAAA query on a channel of its own, cancelled at the deadline. */
  private async query(name: string, deadline: number): Promise<string[]> {
    // c-ares retries by itself within the deadline; the timer below is the hard bound.
    const resolver = new dnsPromises.Resolver({ timeout: Math.max(50, Math.floor(this.timeoutMs / 3)), tries: 2 });
    resolver.setServers([...this.servers]);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      resolver.cancel();
    }, deadline - Date.now());
    let results: PromiseSettledResult<RecordWithTtl[]>[];
    try {
      results = await Promise.allSettled([resolver.resolve4(name, { ttl: true }), resolver.resolve6(name, { ttl: true })]);
    } finally {
      clearTimeout(timer);
    }
    const records: RecordWithTtl[] = [];
    let failure: DnsResolutionError | undefined;
    for (const r of results) {
      if (r.status === 'fulfilled') {
        records.push(...r.value);
        continue;
      }
      const code = (r.reason as NodeJS.ErrnoException | undefined)?.code ?? 'EUNKNOWN';
      if (NO_ADDRESS_CODES.has(code)) continue;
      failure ??=
        timedOut || code === 'ETIMEOUT' || code === 'ECANCELLED'
          ? timeoutError(name, this.timeoutMs)
          : new DnsResolutionError(name, code, `DNS lookup failed (${code})`);
    }
    if (records.length > 0) {
      // One family answered: only checked addresses are ever connected to, so a missing family is safe.
      const addresses = [...new Set(records.map((r) => r.address))];
      const ttlMs = Math.min(this.cacheTtlMs, ...records.map((r) => r.ttl * 1000));
      this.remember(name, ttlMs, { addresses });
      return addresses;
    }
    if (failure) {
      this.remember(name, this.negativeTtlMs, { error: failure });
      throw failure;
    }
    this.remember(name, this.negativeTtlMs, { addresses: [] });
    return [];
  }
}

function timeoutError(host: string, timeoutMs: number): DnsResolutionError {
  return new DnsResolutionError(host, 'ETIMEOUT', `DNS lookup timed out after ${timeoutMs} ms`);
}

function withDeadline<T>(promise: Promise<T>, deadline: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * At most `limit` holders per key; up to `maxWaiting` more wait in order until their deadline.
 * Keys with nobody holding or waiting are forgotten, so the map stays as small as the load.
 */
export class KeyedSemaphore {
  private readonly keys = new Map<string, { active: number; waiting: { deadline: number; grant: () => void; expire: () => void; timer: NodeJS.Timeout }[] }>();

  constructor(
    readonly limit: number,
    readonly maxWaiting: number,
  ) {}

  /** Resolves with a release function; rejects with `busy()` when the waiting room is full or the deadline passes. */
  acquire(key: string, deadline: number, busy: () => Error): Promise<() => void> {
    let slot = this.keys.get(key);
    if (!slot) {
      slot = { active: 0, waiting: [] };
      this.keys.set(key, slot);
    }
    const s = slot;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      // A waiter whose deadline has passed (its timer not yet run) gets busy, not a slot it has no time left to use.
      for (let next = s.waiting.shift(); next; next = s.waiting.shift()) {
        clearTimeout(next.timer);
        if (next.deadline > Date.now()) {
          next.grant();
          return;
        }
        next.expire();
      }
      s.active--;
      if (s.active === 0) this.keys.delete(key);
    };
    if (s.active < this.limit) {
      s.active++;
      return Promise.resolve(release);
    }
    if (s.waiting.length >= this.maxWaiting || deadline <= Date.now()) return Promise.reject(busy());
    return new Promise((resolve, reject) => {
      const waiter = {
        deadline,
        grant: () => resolve(release),
        expire: () => reject(busy()),
        timer: setTimeout(() => {
          s.waiting.splice(s.waiting.indexOf(waiter), 1);
          waiter.expire();
        }, deadline - Date.now()),
      };
      s.waiting.push(waiter);
    });
  }

  /** Holders of `key` right now (tests). */
  active(key: string): number {
    return this.keys.get(key)?.active ?? 0;
  }
}

/**
 * `ip`, `ip:port`, `[ipv6]` or `[ipv6]:port`, as dns.setServers takes them; anything else throws
 * with the entry named. Returned in setServers' spelling.
 */
export function parseDnsServers(entries: readonly string[]): string[] {
  return entries.map((raw) => {
    const entry = raw.trim();
    let ip = entry;
    let port: string | undefined;
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    if (bracketed) {
      ip = bracketed[1];
      port = bracketed[2];
    } else if (isIP(entry) === 0) {
      const m = /^([^:]+):(\d+)$/.exec(entry);
      if (m) {
        ip = m[1];
        port = m[2];
      }
    }
    const family = isIP(ip);
    if (family === 0) throw new Error(`"${raw}" is not a nameserver address (ip, ip:port or [ipv6]:port)`);
    if (port !== undefined && (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535)) {
      throw new Error(`"${raw}" has a bad port (1-65535)`);
    }
    if (port === undefined) return ip;
    return family === 6 ? `[${ip}]:${port}` : `${ip}:${port}`;
  });
}

/** name → addresses from a hosts(5) file; a missing or unreadable file is an empty table. */
export function parseHostsFile(text: string): Map<string, string[]> {
  const table = new Map<string, string[]>();
  for (const line of text.split(/\r?\n/)) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    // Zone ids (fe80::1%eth0) pass isIP but are no destination we could pin to.
    if (!address || isIP(address) === 0 || address.includes('%')) continue;
    for (const raw of names) {
      const name = normaliseHost(raw);
      if (name === '') continue;
      const list = table.get(name) ?? [];
      if (!list.includes(address)) list.push(address);
      table.set(name, list);
    }
  }
  return table;
}

function readHostsFile(file: string): Map<string, string[]> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return new Map();
  }
  return parseHostsFile(text);
}

function positive(name: string, v: number): number {
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number of milliseconds, got ${String(v)}`);
  return v;
}

function nonNegative(name: string, v: number): number {
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be zero or a positive number of milliseconds, got ${String(v)}`);
  return v;
}

function positiveInt(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer, got ${String(v)}`);
  return v;
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

  async resolve(host: string, context?: DnsLookupContext): Promise<string[]> {
    const found = this.entries.get(normaliseHost(host));
    if (found) return [...found];
    return this.options.fallback ? this.options.fallback.resolve(host, context) : [];
  }
}
