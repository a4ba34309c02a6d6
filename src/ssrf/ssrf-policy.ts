import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/errors';
import { Cidr, cidrContains, parseCidrList, parseIp } from './cidr';
import { AllowedDestination, parseAllowDestinations } from './destinations';
import { AddressPolicy, Classification, classifyAddress, classifyHostname } from './classify';
import { DNS_RESOLVER, DnsResolutionError } from './resolver';
import type { DnsResolver } from './resolver';
import { SSRF_MODULE_OPTIONS } from './ssrf.module-definition';
import type { SsrfModuleOptions } from './ssrf.module-definition';
import { UrlCheckOptions, parseDestinationUrl } from './url';

/** A destination that passed the policy in this attempt. Connect only to `addresses`. */
export interface CheckedDestination {
  /** Canonical URL to send the request to (trailing dot removed from the host). */
  url: URL;
  /** Normalised host: lower case, no trailing dot, IPv6 without brackets. */
  host: string;
  port: number;
  /** Every address the host resolved to, all validated (for an IP literal: just it). */
  addresses: string[];
}

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
   *         a host that does not resolve, or a failed lookup (fail closed).
   */
  async checkUrl(rawUrl: string, opts: UrlCheckOptions): Promise<CheckedDestination> {
    const { url, host, port, hostKind } = parseDestinationUrl(rawUrl, opts);

    if (hostKind !== 'name') {
      if (this.isAllowedDestination(host, port)) return { url, host, port, addresses: [host] };
      const verdict = this.classify(host);
      if (verdict.blocked) throw blockedError(`destination ${host} is ${verdict.description}`);
      return { url, host, port, addresses: [host] };
    }

    const nameVerdict = classifyHostname(host);
    if (nameVerdict.blocked) throw blockedError(`destination host ${host} is ${nameVerdict.description}`);

    const addresses = await this.resolve(host);
    for (const address of addresses) {
      const verdict = this.classify(address);
      // One bad answer blocks the lot: we cannot choose which address the connect uses.
      if (verdict.blocked) {
        throw blockedError(`destination ${address} (resolved from ${host}) is ${verdict.description}`);
      }
    }
    return { url, host, port, addresses: canonical(addresses) };
  }

  /**
   * Delivery-time spelling of checkUrl (same checks, same result); accepts the stored URL
   * as a string or URL. Call it on every attempt and pin the connection to the result.
   */
  async checkDestination(url: string | URL, opts: UrlCheckOptions): Promise<CheckedDestination> {
    return this.checkUrl(typeof url === 'string' ? url : url.href, opts);
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

  private async resolve(host: string): Promise<string[]> {
    let addresses: string[];
    try {
      addresses = await this.resolver.resolve(host);
    } catch (err) {
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

/** One spelling per address (e.g. compressed IPv6), no duplicates; input already validated. */
function canonical(addresses: string[]): string[] {
  return [...new Set(addresses.map((a) => String(parseIp(a))))];
}
