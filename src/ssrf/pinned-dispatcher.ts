import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { createSecureContext, rootCertificates } from 'node:tls';
import { LRUCache } from 'lru-cache';
import { Agent, buildConnector } from 'undici';
import type { Dispatcher } from 'undici';
import type { CheckedDestination } from './ssrf-policy';
import { DEFAULT_HTTPS_PORT, normaliseHost } from './url';

export interface PinnedDispatcherOptions {
  /** Extra trusted CA (PEM, may hold several certs), added to Node's default roots. */
  ca?: string | Buffer;
  /** TCP+TLS connect timeout, default 10 000 ms. */
  connectTimeoutMs?: number;
  /** Idle keep-alive socket lifetime, default 4 000 ms (undici's default). */
  keepAliveTimeoutMs?: number;
  /** Max sockets per destination, default unlimited (undici's default). */
  connections?: number;
  /** How many destinations keep a pool at once (LRU), default 256. */
  maxDestinations?: number;
  /** How long an evicted pool stays usable before it is closed, default 60 000 ms. */
  evictionGraceMs?: number;
}

export interface PinnedDispatcher {
  /**
   * A dispatcher that only connects to `dest.host:dest.port` at `dest.addresses` (no DNS
   * lookup of its own), verifies TLS for `dest.host` (SNI = host; none for IP literals)
   * and never follows redirects. Pass it as `dispatcher` to undici's `request()` together
   * with `dest.url`. Pools are shared by destinations with the same host, port and
   * address set, so keep-alive works while DNS is stable and a DNS change never reuses a
   * socket opened to an address that was not checked in this attempt.
   */
  dispatcherFor(dest: CheckedDestination): Dispatcher;
  /** Number of destination pools currently cached. */
  readonly size: number;
  /** Graceful shutdown: waits for in-flight requests. */
  close(): Promise<void>;
  /** Immediate shutdown: aborts in-flight requests. */
  destroy(): Promise<void>;
}

/** Raised (via the connect callback) when a request tries to leave its pinned destination. */
export class PinnedDestinationError extends Error {
  readonly code = 'ERR_SSRF_PIN_MISMATCH';
  constructor(message: string) {
    super(message);
    this.name = 'PinnedDestinationError';
  }
}

/**
 * A dns.lookup replacement that answers only `host` and only with `addresses` (already
 * validated): the socket connects to exactly what the policy checked, while TLS still
 * verifies the certificate against the host name. Any other name fails closed.
 *
 * It always calls back on a later tick, as dns.lookup does. net and tls start the lookup inside
 * `connect()` and only get their 'error' listeners afterwards: answered synchronously, a connect
 * that the kernel refuses at once (ENETUNREACH to an IPv6-only host without an IPv6 route)
 * destroyed the socket inside tls.connect, which then threw, and the socket's 'error' event
 * fired with no listener and ended the process.
 */
export function pinnedLookup(host: string, addresses: readonly string[]): LookupFunction {
  const pinned = addresses.map((address) => ({ address, family: isIP(address) }));
  return (hostname, options, callback) => {
    if (normaliseHost(hostname) !== host) {
      const err = new PinnedDestinationError(`refusing to resolve ${hostname}: connection is pinned to ${host}`);
      process.nextTick(callback, err, '');
      return;
    }
    const want = familyNumber(options.family);
    const candidates: LookupAddress[] = want === 0 ? pinned : pinned.filter((a) => a.family === want);
    if (candidates.length === 0) {
      const err: NodeJS.ErrnoException = new Error(`no pinned IPv${want} address for ${host}`);
      err.code = 'ENOTFOUND';
      process.nextTick(callback, err, '');
      return;
    }
    if (options.all) {
      process.nextTick(callback, null, candidates.map((a) => ({ ...a })));
    } else {
      process.nextTick(callback, null, candidates[0].address, candidates[0].family);
    }
  };
}

function familyNumber(family: number | 'IPv4' | 'IPv6' | undefined): number {
  if (family === 'IPv4') return 4;
  if (family === 'IPv6') return 6;
  return family ?? 0;
}

/**
 * Builds the process-wide delivery transport. One instance per process; call
 * `dispatcherFor(dest)` on every attempt with the CheckedDestination from that attempt.
 */
export function createPinnedDispatcher(opts: PinnedDispatcherOptions = {}): PinnedDispatcher {
  // Built once: a context made from `ca` on every connect parses Node's ~150 root certificates
  // again each time (milliseconds of CPU per TLS handshake).
  const secureContext = opts.ca === undefined ? undefined : createSecureContext({ ca: [...rootCertificates, opts.ca.toString()] });
  const maxDestinations = opts.maxDestinations ?? 256;
  if (!Number.isInteger(maxDestinations) || maxDestinations < 1) {
    throw new Error('maxDestinations must be a positive integer');
  }
  const graceMs = opts.evictionGraceMs ?? 60_000;
  const retiring = new Set<Agent>();
  // Least recently used dropped (and retired) first. Not a Map with delete-and-set on each use:
  // every send re-inserted its key, and the holes that leaves made the Map rebuild its table over
  // and over (megabytes of garbage per 50,000 sends to one destination).
  const pools = new LRUCache<string, Agent>({
    max: maxDestinations,
    dispose: (agent, _key, reason) => {
      if (reason === 'evict') retire(agent);
    },
  });

  function build(dest: CheckedDestination): Agent {
    const connector = buildConnector({
      ...(secureContext ? { secureContext } : {}),
      timeout: opts.connectTimeoutMs ?? 10_000,
      lookup: pinnedLookup(dest.host, dest.addresses),
    });
    const connect: buildConnector.connector = (o, callback) => {
      // Second line of defence: this pool serves one origin; anything else fails closed.
      const port = o.port ? Number(o.port) : DEFAULT_HTTPS_PORT;
      if (o.protocol !== 'https:' || normaliseHost(o.hostname) !== dest.host || port !== dest.port) {
        callback(
          new PinnedDestinationError(
            `refusing to connect to ${o.protocol}//${o.hostname}:${port}: dispatcher is pinned to https://${dest.host}:${dest.port}`,
          ),
          null,
        );
        return;
      }
      // Third: a connector that throws (Node's tls.connect has, when its socket died inside it)
      // fails this request only; a throw here would escape into undici's dispatch loop.
      try {
        return connector(o, callback);
      } catch (err) {
        callback(err instanceof Error ? err : new Error(String(err)), null);
        return;
      }
    };
    return new Agent({
      connect,
      maxOrigins: 1,
      keepAliveTimeout: opts.keepAliveTimeoutMs ?? 4_000,
      ...(opts.connections !== undefined ? { connections: opts.connections } : {}),
    });
  }

  function retire(agent: Agent): void {
    // Not closed at once: a caller may hold it between dispatcherFor() and request().
    retiring.add(agent);
    setTimeout(() => {
      retiring.delete(agent);
      void agent.close().catch(() => undefined);
    }, graceMs).unref();
  }

  return {
    dispatcherFor(dest: CheckedDestination): Dispatcher {
      assertCheckedDestination(dest);
      const key = `${dest.host}|${dest.port}|${[...dest.addresses].sort().join(',')}`;
      let agent = pools.get(key); // and now the most recently used
      if (agent === undefined) pools.set(key, (agent = build(dest)));
      return agent;
    },
    get size() {
      return pools.size;
    },
    async close() {
      const all = [...pools.values(), ...retiring];
      pools.clear();
      retiring.clear();
      await Promise.all(all.map((a) => a.close()));
    },
    async destroy() {
      const all = [...pools.values(), ...retiring];
      pools.clear();
      retiring.clear();
      await Promise.all(all.map((a) => a.destroy()));
    },
  };
}

function assertCheckedDestination(dest: CheckedDestination): void {
  // Programming errors, not user errors: refuse to build an unpinned dispatcher.
  if (!dest || typeof dest.host !== 'string' || dest.host === '' || !Array.isArray(dest.addresses)) {
    throw new Error('dispatcherFor needs a CheckedDestination from SsrfPolicy.checkUrl');
  }
  if (dest.addresses.length === 0 || dest.addresses.some((a) => isIP(a) === 0)) {
    throw new Error(`dispatcherFor: destination ${dest.host} has no valid pinned addresses`);
  }
  if (isIP(dest.host) !== 0 && (dest.addresses.length !== 1 || dest.addresses[0] !== dest.host)) {
    throw new Error(`dispatcherFor: IP literal ${dest.host} must be pinned to itself`);
  }
  if (!Number.isInteger(dest.port) || dest.port < 1 || dest.port > 65535) {
    throw new Error(`dispatcherFor: invalid port ${String(dest.port)}`);
  }
}
