import { isIP } from 'node:net';
import * as ipaddr from 'ipaddr.js';
import { Cidr, IpAddress, cidrContains, parseCidr, parseIp } from './cidr';
import {
  AddressClass,
  BLOCKED_HOSTNAMES,
  BLOCKED_HOSTNAME_SUFFIXES,
  CLASS_DESCRIPTIONS,
  Embedding,
  IPV4_RANGES,
  IPV6_GLOBAL_UNICAST,
  IPV6_RANGES,
  METADATA_RANGES,
  RangeEntry,
} from './ranges';

/** Operator overrides, already parsed (see parseCidrList). */
export interface AddressPolicy {
  /** Addresses inside these bypass the built-in block list (not the deny list). */
  readonly allow?: readonly Cidr[];
  /** Extra blocks; they win over `allow`. */
  readonly deny?: readonly Cidr[];
}

export type Classification =
  | { blocked: false }
  | {
      blocked: true;
      class: AddressClass;
      /** Phrase that completes "destination X is ...". */
      description: string;
      /** The matched block (for logs); absent for `invalid` and `not-global`. */
      range?: string;
    };

interface CompiledRange extends RangeEntry {
  readonly net: Cidr;
}

function compile(entries: readonly RangeEntry[]): CompiledRange[] {
  // Most specific first, so the first hit is the longest-prefix match.
  return entries
    .map((e) => ({ ...e, net: parseCidr(e.cidr) }))
    .sort((a, b) => b.net.prefix - a.net.prefix);
}

const V4_TABLE = compile([...METADATA_RANGES.filter((r) => isIP(r.cidr.split('/')[0]) === 4), ...IPV4_RANGES]);
const V6_TABLE = compile([...METADATA_RANGES.filter((r) => isIP(r.cidr.split('/')[0]) === 6), ...IPV6_RANGES]);
const V6_GLOBAL = parseCidr(IPV6_GLOBAL_UNICAST);
const METADATA_TABLE = compile(METADATA_RANGES);

const ALLOWED: Classification = Object.freeze({ blocked: false });

function blocked(entry: Pick<RangeEntry, 'class' | 'description'>, range?: string): Classification {
  return {
    blocked: true,
    class: entry.class,
    description: entry.description ?? CLASS_DESCRIPTIONS[entry.class],
    ...(range !== undefined ? { range } : {}),
  };
}

function lookup(table: readonly CompiledRange[], address: IpAddress): CompiledRange | undefined {
  return table.find((r) => cidrContains(r.net, address));
}

function embeddedIpv4(address: ipaddr.IPv6, how: Embedding): ipaddr.IPv4 {
  const p = address.parts;
  const [hi, lo] = how === 'low32' ? [p[6], p[7]] : [p[1], p[2]];
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

/** The built-in verdict, ignoring operator overrides. */
function classifyBuiltin(address: IpAddress): Classification {
  if (address.kind() === 'ipv4') {
    const hit = lookup(V4_TABLE, address);
    return hit ? blocked(hit, hit.net.text) : ALLOWED;
  }

  const v6 = address as ipaddr.IPv6;
  const hit = lookup(V6_TABLE, v6);
  if (hit) {
    if (hit.embeds) {
      // Report what the wrapper would really reach (better message); blocked either way.
      const inner = embeddedIpv4(v6, hit.embeds);
      const innerVerdict = classifyBuiltin(inner);
      if (innerVerdict.blocked) {
        const wrapper = hit.description ?? CLASS_DESCRIPTIONS[hit.class];
        return {
          ...innerVerdict,
          description: `${innerVerdict.description} (${inner.toString()} embedded in ${wrapper})`,
        };
      }
    }
    return blocked(hit, hit.net.text);
  }
  if (!cidrContains(V6_GLOBAL, v6)) {
    return blocked({ class: 'not-global' });
  }
  // A zone id only makes sense for non-global scopes; never deliver to a scoped address.
  if (v6.zoneId !== undefined) {
    return blocked({ class: 'not-global' });
  }
  return ALLOWED;
}

/**
 * Classifies one IP address (as a string) against the block table and operator overrides.
 *
 * - Only canonical forms are accepted (node's `net.isIP`): anything else, including the
 *   inet_aton shorthands ("127.1", "0x7f.1", "010.0.0.1"), is `invalid` and blocked, so a
 *   resolver or caller can never smuggle in a form we would read differently from the OS.
 *   (URL hosts are canonicalised by WHATWG URL before they get here.)
 * - `deny` wins over everything.
 * - `allow` unblocks an address inside one of its CIDRs, except that a metadata address is
 *   only unblocked by an allow entry naming exactly that address (/32 or /128): a broad
 *   "169.254.0.0/16" or "0.0.0.0/0" must not open the credentials endpoint by accident.
 */
export function classifyAddress(ip: string, policy: AddressPolicy = {}): Classification {
  let address: IpAddress | null = null;
  try {
    address = typeof ip === 'string' ? parseIp(ip) : null;
  } catch {
    address = null;
  }
  if (!address) return blocked({ class: 'invalid' });

  const denied = policy.deny?.find((c) => cidrContains(c, address));
  if (denied) return blocked({ class: 'denied' }, denied.text);

  const verdict = classifyBuiltin(address);
  if (!verdict.blocked || !policy.allow?.length) return verdict;

  const allowedBy = policy.allow.filter((c) => cidrContains(c, address));
  if (allowedBy.length === 0) return verdict;
  if (verdict.class === 'metadata' || isMetadataAddress(address)) {
    const hostBits = address.kind() === 'ipv4' ? 32 : 128;
    return allowedBy.some((c) => c.prefix === hostBits) ? ALLOWED : verdict;
  }
  return ALLOWED;
}

function isMetadataAddress(address: IpAddress): boolean {
  return lookup(METADATA_TABLE, address) !== undefined;
}

/**
 * Refuses host names that must never be contacted whatever they resolve to.
 * `host` must already be normalised (lower case, no trailing dot): see normaliseHost.
 */
export function classifyHostname(host: string): Classification {
  const exact = BLOCKED_HOSTNAMES[host];
  if (Object.prototype.hasOwnProperty.call(BLOCKED_HOSTNAMES, host) && exact) {
    return blocked({ class: exact });
  }
  for (const [suffix, cls] of Object.entries(BLOCKED_HOSTNAME_SUFFIXES)) {
    if (host.endsWith(suffix)) return blocked({ class: cls });
  }
  return ALLOWED;
}
