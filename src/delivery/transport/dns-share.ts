import type { DnsLookupGate } from '../../ssrf/resolver';

/**
 * How many of one customer's delivery attempts may wait for DNS at once in this worker: a
 * customer's share of the slots. An attempt holds its worker slot while its destination is
 * resolved (up to the DNS timeout when the customer's nameservers never answer), so past the
 * share the lookup is refused at once, never queued: the attempt fails as a transient
 * `dns_failure` (retried on the schedule) and gives its slot back. Cache and hosts-file hits and
 * IP literals never enter (the resolver asks the gate only when it must ask the nameservers);
 * lookups of one name in flight share one query, but each attempt waiting on it holds a place.
 * Counted per process, synchronously: no await between the check and the count.
 */
export class DnsShare {
  private readonly held = new Map<string, number>();

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`the DNS lookups per customer must be a positive whole number, got ${String(limit)}`);
  }

  /** The gate of one attempt's destination check, for `SsrfPolicy.checkDestination({ dnsGate })`. */
  gateFor(customerId: string): DnsLookupGate {
    return { limit: this.limit, enter: () => this.enter(customerId) };
  }

  /** A place for one lookup of `customerId`, given back by calling the function (once; later calls do nothing); null when the share is taken. */
  enter(customerId: string): (() => void) | null {
    const n = this.held.get(customerId) ?? 0;
    if (n >= this.limit) return null;
    this.held.set(customerId, n + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const rest = (this.held.get(customerId) ?? 1) - 1;
      if (rest > 0) this.held.set(customerId, rest);
      else this.held.delete(customerId);
    };
  }

  /** Lookups of `customerId` holding a place now. */
  inFlight(customerId: string): number {
    return this.held.get(customerId) ?? 0;
  }

  /** Customers with a lookup in flight (the map never outgrows the load). */
  get customers(): number {
    return this.held.size;
  }
}
