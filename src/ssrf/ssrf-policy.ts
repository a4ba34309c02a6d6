import { Inject, Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { AppError } from '../common/errors';
import { Cidr, cidrContains, parseCidr, parseCidrList, parseIp } from './cidr';
import { AllowedDestination, parseAllowDestinations } from './destinations';
import { AddressPolicy, Classification, classifyAddress, classifyHostname } from './classify';
import { DNS_RESOLVER, DnsBusyError, DnsResolutionError } from './resolver';
import type { DnsLookupContext, DnsLookupGate, DnsResolver } from './resolver';
import { SSRF_MODULE_OPTIONS } from './ssrf.module-definition';
import type { SsrfModuleOptions } from './ssrf.module-definition';
import { ParsedDestinationUrl, UrlCheckOptions, parseDestinationUrl } from './url';

/** A destination that passed the policy in this attempt. Connect only to `addresses`. */
export interface CheckedDestination {
  /** Canonical URL to send the request to (trailing dot removed from the host). */
  url: URL;
  /** Normalised host: lower case, no trailing dot, IPv6 without brackets. */
  host: string;
  port: number;
  /** Every address the host resolved to, all validated (for an IP literal: just it). */
  addresses: string[];
  /**
   * True when an address passed only through the customer's private allow-list: the sender
   * keeps no response excerpt and reports connection failures as one class (README).
   */
  privateGrant?: boolean;
}

/** Options of one check: the URL rules, the owner, and the customer's private allow-list (loaded only when an address needs it). */
export interface DestinationCheckOptions extends UrlCheckOptions {
  privateGrants?: () => Promise<readonly PrivateGrant[]>;
  /** The webhook's owner: DNS lookups are bounded per customer (see SystemDnsResolver). */
  customerId?: string;
  /**
   * The caller's own bound on this customer's lookups that wait for the nameservers (a delivery
   * worker's share). With it a lookup never waits for a place: a full bound is a DnsBusyError
   * at once (an `unresolved` DestinationBlockedError from checkDestination).
   */
  dnsGate?: DnsLookupGate;
}

/** Distinct URLs and addresses remembered by a policy (each entry well under 1 KB). */
const CHECK_CACHE_MAX = 10_000;

export type SsrfPolicyOptions = Pick<SsrfModuleOptions, 'allowCidrs' | 'denyCidrs' | 'allowDestinations'>;

/**
 * Decides whether a webhook URL may be contacted. Call `checkUrl` when a webhook is
 * created/updated AND again on every delivery attempt (DNS may have changed since), then
 * connect only to the returned addresses (see createPinnedDispatcher).
 */
@Injectable()
export class SsrfPolicy {
  readonly allowList: readonly Cidr[];
  readonly denyList: readonly Cidr[];
  /** Exact IP:port receivers let through the block list (not their neighbours, not other ports). */
  readonly allowedDestinations: readonly AllowedDestination[];
  private readonly overrides: AddressPolicy;
  /**
   * A delivery checks its webhook's stored URL on every attempt. Parsing it (WHATWG URL and the
   * shape rules) and classifying its addresses against lists fixed for this policy's life give
   * the same answer every time: both are remembered, so an attempt costs a DNS cache lookup and
   * two map reads (about 10 µs less per attempt). DNS answers are not: they are resolved (or
   * taken from the resolver's TTL-bound cache) on every attempt, as before. The URL object is
   * shared by the attempts to one URL: read it, never change it.
   */
  private readonly parsed = new LRUCache<string, ParsedDestinationUrl>({ max: CHECK_CACHE_MAX });
  private readonly verdicts = new LRUCache<string, { verdict: Classification; canonical: string }>({ max: CHECK_CACHE_MAX });

  constructor(
    @Inject(SSRF_MODULE_OPTIONS) options: SsrfPolicyOptions,
    @Inject(DNS_RESOLVER) private readonly resolver: DnsResolver,
  ) {
    // Bad operator config must fail at boot, not at the first webhook.
    this.allowList = Object.freeze(parseCidrList(options.allowCidrs ?? ''));
    this.denyList = Object.freeze(parseCidrList(options.denyCidrs ?? ''));
    this.allowedDestinations = Object.freeze(parseAllowDestinations(options.allowDestinations ?? ''));
    this.overrides = { allow: this.allowList, deny: this.denyList };
  }

  /** Classifies one address with this policy's allow/deny overrides. */
  classify(ip: string): Classification {
    return classifyAddress(ip, this.overrides);
  }

  /**
   * Validates a webhook URL and its current DNS answers.
   * @throws AppError VALIDATION_ERROR (400) for a malformed URL ("url must ...");
   *         WEBHOOK_DESTINATION_BLOCKED (422) for a blocked port, host name or address,
   *         a host that does not resolve, or a failed lookup (fail closed);
   *         RATE_LIMITED (429, Retry-After) when the customer has too many lookups in flight.
   */
  async checkUrl(rawUrl: string, opts: DestinationCheckOptions): Promise<CheckedDestination> {
    return this.check(rawUrl, opts, 'api');
  }

  /**
   * Delivery-time spelling of checkUrl (same checks, same result); accepts the stored URL
   * as a string or URL. Call it on every attempt and pin the connection to the result.
   * A customer over its DNS bound gets DestinationBlockedError with `unresolved` (a retried
   * DNS failure), not a 429.
   */
  async checkDestination(url: string | URL, opts: DestinationCheckOptions): Promise<CheckedDestination> {
    return this.check(typeof url === 'string' ? url : url.href, opts, 'delivery');
  }

  private async check(rawUrl: string, opts: DestinationCheckOptions, caller: 'api' | 'delivery'): Promise<CheckedDestination> {
    const { url, host, port, hostKind } = this.parse(rawUrl, opts);
    let grants: readonly PrivateGrant[] | undefined;
    let privateGrant = false;
    /** A blocked address still passes when the customer's own grant covers it and its port (never a metadata address or a denied one). */
    const granted = async (address: string, verdict: Classification): Promise<boolean> => {
      if (!verdict.blocked || !opts.privateGrants || !GRANTABLE.has(verdict.class)) return false;
      // The deny list classifies as `denied`, which no grant opens.
      const ip = parseIp(address);
      if (!ip) return false;
      grants ??= await opts.privateGrants();
      const ok = grants.some((g) => cidrContains(g.cidr, ip) && portAllowed(g, port));
      if (ok) privateGrant = true;
      return ok;
    };

    if (hostKind !== 'name') {
      if (this.isAllowedDestination(host, port)) return { url, host, port, addresses: [host] };
      const { verdict } = this.verdict(host);
      if (verdict.blocked && !(await granted(host, verdict))) throw blockedError(`destination ${host} is ${verdict.description}`);
      return { url, host, port, addresses: [host], ...(privateGrant ? { privateGrant } : {}) };
    }

    const nameVerdict = classifyHostname(host);
    if (nameVerdict.blocked) throw blockedError(`destination host ${host} is ${nameVerdict.description}`);

    const addresses = await this.resolve(host, { customerId: opts.customerId, gate: opts.dnsGate }, caller);
    const canonical = new Set<string>();
    for (const address of addresses) {
      const { verdict, canonical: text } = this.verdict(address);
      canonical.add(text);
      // One bad answer blocks the lot: we cannot choose which address the connect uses.
      if (verdict.blocked && !(await granted(address, verdict))) {
        throw blockedError(`destination ${address} (resolved from ${host}) is ${verdict.description}`);
      }
    }
    // One spelling per address (e.g. compressed IPv6), no duplicates.
    return { url, host, port, addresses: [...canonical], ...(privateGrant ? { privateGrant } : {}) };
  }

  /** parseDestinationUrl, remembered when it passes (a URL it refuses is parsed again each time, and throws). */
  private parse(rawUrl: string, opts: UrlCheckOptions): ParsedDestinationUrl {
    const key = (opts.allowNonstandardPort ? '1' : '0') + rawUrl;
    let parsed = this.parsed.get(key);
    if (parsed === undefined) this.parsed.set(key, (parsed = parseDestinationUrl(rawUrl, opts)));
    return parsed;
  }

  /** `classify`, and the address's canonical spelling, remembered by address text. */
  private verdict(address: string): { verdict: Classification; canonical: string } {
    let v = this.verdicts.get(address);
    if (v === undefined) {
      const verdict = this.classify(address);
      // An address that does not parse is blocked (`invalid`) and never connected to.
      let ip: ReturnType<typeof parseIp>;
      try {
        ip = parseIp(address);
      } catch {
        ip = null;
      }
      this.verdicts.set(address, (v = { verdict, canonical: ip === null ? address : String(ip) }));
    }
    return v;
  }

  /** An IP literal and port named exactly in allowDestinations, and not on the deny list. */
  private isAllowedDestination(host: string, port: number): boolean {
    if (this.allowedDestinations.length === 0) return false;
    const ip = parseIp(host);
    if (ip === null) return false;
    const address = String(ip);
    if (!this.allowedDestinations.some((d) => d.address === address && d.port === port)) return false;
    // The operator's deny list wins over every allowance.
    return !this.denyList.some((c) => cidrContains(c, ip));
  }

  private async resolve(host: string, context: DnsLookupContext, caller: 'api' | 'delivery'): Promise<string[]> {
    let addresses: string[];
    try {
      addresses = await this.resolver.resolve(host, context);
    } catch (err) {
      if (err instanceof DnsBusyError && caller === 'api') {
        // Not the destination's fault: the caller's own lookups are still running. Try again shortly.
        throw new AppError('RATE_LIMITED', `destination host ${host} could not be checked now: ${err.message}; retry later`, {
          'Retry-After': String(err.retryAfterSeconds),
        });
      }
      const reason = err instanceof DnsResolutionError ? err.message : 'DNS lookup failed';
      throw blockedError(`destination host ${host} could not be resolved: ${reason}`, true);
    }
    if (!Array.isArray(addresses) || addresses.length === 0) {
      throw blockedError(`destination host ${host} does not resolve`, true);
    }
    return addresses;
  }
}

/**
 * 422 for the API. `unresolved` tells a delivery worker that the host did not resolve (or the
 * lookup failed) — a transient DNS failure there — rather than resolving to a blocked address.
 */
export class DestinationBlockedError extends AppError {
  constructor(
    message: string,
    readonly unresolved = false,
  ) {
    super('WEBHOOK_DESTINATION_BLOCKED', message);
  }
}

function blockedError(message: string, unresolved = false): AppError {
  return new DestinationBlockedError(message, unresolved);
}

/**
 * One private destination the operator opened to one customer: `CIDR[:PORTS]`, PORTS being
 * `443` (the default), a list `443,8443`, ranges `8000-8100`, or `*` for any port. The CIDR needs
 * its prefix length (`10.1.2.3/32`), so an IPv6 address's colons never read as a port.
 */
export interface PrivateGrant {
  cidr: Cidr;
  /** null: any port. */
  ports: readonly (readonly [number, number])[] | null;
  /** Canonical spelling, as stored and shown. */
  text: string;
}

/** Address classes a grant may open: private and local networks. Metadata, multicast and the like stay closed whatever the grant says. */
const GRANTABLE = new Set<string>(['private', 'shared', 'loopback', 'link-local', 'unique-local', 'site-local', 'not-global', 'reserved', 'benchmarking']);

export function parsePrivateGrant(raw: string): PrivateGrant {
  const text = raw.trim();
  const slash = text.lastIndexOf('/');
  if (slash < 0) throw new Error(`"${text}" must be CIDR[:PORTS] with a prefix length, e.g. 10.0.0.0/8:443 or 10.1.2.3/32:8443`);
  const colon = text.indexOf(':', slash);
  const cidr = parseCidr(colon < 0 ? text : text.slice(0, colon));
  const portText = colon < 0 ? '443' : text.slice(colon + 1);
  let ports: [number, number][] | null = null;
  if (portText !== '*') {
    ports = portText.split(',').map((part) => {
      const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(part);
      const lo = m ? Number(m[1]) : NaN;
      const hi = m ? Number(m[2] ?? m[1]) : NaN;
      if (!(lo >= 1 && hi <= 65535 && lo <= hi)) throw new Error(`"${text}": ports must be * or a list of ports and ranges from 1 to 65535, e.g. 443,8000-8100`);
      return [lo, hi];
    });
  }
  return { cidr, ports, text: `${cidr.text}:${ports === null ? '*' : ports.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(',')}` };
}

/** The stored list (space-separated grants) → grants; null or blank: none. */
export function parsePrivateGrants(stored: string | null | undefined): PrivateGrant[] {
  return (stored ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map(parsePrivateGrant);
}

function portAllowed(g: PrivateGrant, port: number): boolean {
  return g.ports === null || g.ports.some(([lo, hi]) => port >= lo && port <= hi);
}
