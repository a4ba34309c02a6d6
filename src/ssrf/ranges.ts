/**
 * The SSRF block table. Sources: the IANA IPv4 and IPv6 Special-Purpose Address Registries
 * (RFC 6890 and updates), RFC 1918, RFC 6598, RFC 4291, RFC 6052/8215, RFC 3056, RFC 4380,
 * RFC 9637, plus the well-known cloud metadata endpoints.
 *
 * We keep our own table instead of ipaddr.js's `range()` because that calls several
 * special-purpose IPv6 ranges (e.g. 2001::/23 sub-blocks, 3fff::/20) `unicast`.
 *
 * Lookup is most-specific-prefix-wins, so a /32 metadata entry beats the /16 link-local
 * entry it sits in, and 255.255.255.255/32 beats 240.0.0.0/4.
 */

/** Why a destination is refused; stable strings, safe to log and to match on in tests. */
export type AddressClass =
  | 'loopback'
  | 'link-local'
  | 'private'
  | 'metadata'
  | 'unspecified'
  | 'shared'
  | 'documentation'
  | 'benchmarking'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'ipv4-mapped'
  | 'ipv4-compatible'
  | 'ipv4-translated'
  | 'nat64'
  | '6to4'
  | 'teredo'
  | 'unique-local'
  | 'site-local'
  | 'discard'
  | 'not-global'
  | 'denied'
  | 'invalid';

/** Human phrases used in error messages: "destination X is <phrase>". */
export const CLASS_DESCRIPTIONS: Readonly<Record<AddressClass, string>> = {
  loopback: 'a loopback address',
  'link-local': 'a link-local address',
  private: 'a private RFC 1918 address',
  metadata: 'a cloud metadata-service address',
  unspecified: 'an unspecified ("this network") address',
  shared: 'a shared carrier-grade NAT address (RFC 6598)',
  documentation: 'a documentation-only address',
  benchmarking: 'a benchmarking address',
  multicast: 'a multicast address',
  broadcast: 'the limited broadcast address',
  reserved: 'a reserved special-purpose address',
  'ipv4-mapped': 'an IPv4-mapped IPv6 address',
  'ipv4-compatible': 'an IPv4-compatible IPv6 address',
  'ipv4-translated': 'an IPv4-translated IPv6 address',
  nat64: 'a NAT64 translation address',
  '6to4': 'a 6to4 transition address',
  teredo: 'a Teredo tunnelling address',
  'unique-local': 'a unique-local IPv6 address',
  'site-local': 'a site-local IPv6 address',
  discard: 'a discard-only IPv6 address',
  'not-global': 'not a public IP address',
  denied: 'an address blocked by the operator deny list',
  invalid: 'not a valid IP address',
};

/**
 * How an IPv6 wrapper embeds an IPv4 address, so the message can name the real target
 * (e.g. ::ffff:7f00:1 → 127.0.0.1). `low32` = last 32 bits; `sixToFour` = bits 16..47.
 */
export type Embedding = 'low32' | 'sixToFour';

export interface RangeEntry {
  readonly cidr: string;
  readonly class: AddressClass;
  /** Overrides the class phrase when the range deserves a more precise one. */
  readonly description?: string;
  /** Why it is blocked (README / reviewers), not shown to API clients. */
  readonly why: string;
  readonly embeds?: Embedding;
}

/** Cloud metadata endpoints. Listed separately so the allow-list can treat them specially. */
export const METADATA_RANGES: readonly RangeEntry[] = [
  { cidr: '169.254.169.254/32', class: 'metadata', why: 'AWS/GCP/Azure/OpenStack/DigitalOcean instance metadata (IMDS)' },
  { cidr: '169.254.170.2/32', class: 'metadata', why: 'AWS ECS task metadata and credentials endpoint' },
  { cidr: '169.254.170.23/32', class: 'metadata', why: 'AWS EKS Pod Identity agent' },
  { cidr: 'fd00:ec2::254/128', class: 'metadata', why: 'AWS IMDS over IPv6' },
  { cidr: 'fd00:ec2::23/128', class: 'metadata', why: 'AWS EKS Pod Identity agent over IPv6' },
  { cidr: '100.100.100.200/32', class: 'metadata', why: 'Alibaba Cloud instance metadata' },
  { cidr: '192.0.0.192/32', class: 'metadata', why: 'Oracle Cloud instance metadata' },
  // Publicly routable on paper, but inside Azure it is the host "wireserver".
  { cidr: '168.63.129.16/32', class: 'metadata', why: 'Azure WireServer / host agent (otherwise public space)' },
];

export const IPV4_RANGES: readonly RangeEntry[] = [
  { cidr: '0.0.0.0/8', class: 'unspecified', why: '"this network" (RFC 791); 0.0.0.0 reaches the local host on Linux' },
  { cidr: '10.0.0.0/8', class: 'private', why: 'private-use (RFC 1918)' },
  { cidr: '100.64.0.0/10', class: 'shared', why: 'shared address space / carrier-grade NAT (RFC 6598)' },
  { cidr: '127.0.0.0/8', class: 'loopback', why: 'loopback (RFC 1122)' },
  { cidr: '169.254.0.0/16', class: 'link-local', why: 'link-local (RFC 3927); home of most metadata services' },
  { cidr: '172.16.0.0/12', class: 'private', why: 'private-use (RFC 1918)' },
  { cidr: '192.0.0.0/24', class: 'reserved', description: 'an IETF protocol-assignment address', why: 'IETF protocol assignments (RFC 6890)' },
  { cidr: '192.0.2.0/24', class: 'documentation', why: 'TEST-NET-1 (RFC 5737)' },
  { cidr: '192.31.196.0/24', class: 'reserved', description: 'a reserved AS112 DNS service address', why: 'AS112-v4 (RFC 7535); not a webhook receiver' },
  { cidr: '192.52.193.0/24', class: 'reserved', description: 'a reserved AMT relay address', why: 'AMT anycast (RFC 7450)' },
  { cidr: '192.88.99.0/24', class: '6to4', description: 'a 6to4 relay anycast address', why: 'deprecated 6to4 relay anycast (RFC 7526)' },
  { cidr: '192.168.0.0/16', class: 'private', why: 'private-use (RFC 1918)' },
  { cidr: '192.175.48.0/24', class: 'reserved', description: 'a reserved AS112 DNS service address', why: 'AS112 direct delegation (RFC 7534)' },
  { cidr: '198.18.0.0/15', class: 'benchmarking', why: 'benchmarking (RFC 2544); often used inside labs and VPNs' },
  { cidr: '198.51.100.0/24', class: 'documentation', why: 'TEST-NET-2 (RFC 5737)' },
  { cidr: '203.0.113.0/24', class: 'documentation', why: 'TEST-NET-3 (RFC 5737)' },
  { cidr: '224.0.0.0/4', class: 'multicast', why: 'multicast (RFC 5771)' },
  { cidr: '240.0.0.0/4', class: 'reserved', description: 'a reserved (future use) address', why: 'reserved for future use (RFC 1112)' },
  { cidr: '255.255.255.255/32', class: 'broadcast', why: 'limited broadcast (RFC 919)' },
];

/**
 * IPv6 entries that get a precise class. Anything not matched here and outside 2000::/3
 * is `not-global`; the entries inside 2000::/3 are the carve-outs from global unicast.
 */
export const IPV6_RANGES: readonly RangeEntry[] = [
  { cidr: '::/128', class: 'unspecified', why: 'unspecified address (RFC 4291)' },
  { cidr: '::1/128', class: 'loopback', why: 'loopback (RFC 4291)' },
  { cidr: '::/96', class: 'ipv4-compatible', embeds: 'low32', why: 'deprecated IPv4-compatible addresses (RFC 4291)' },
  { cidr: '::ffff:0:0/96', class: 'ipv4-mapped', embeds: 'low32', why: 'IPv4-mapped (RFC 4291): a socket would reach the embedded IPv4 address' },
  { cidr: '::ffff:0:0:0/96', class: 'ipv4-translated', embeds: 'low32', why: 'IPv4-translated (RFC 2765 SIIT)' },
  { cidr: '64:ff9b::/96', class: 'nat64', embeds: 'low32', why: 'NAT64 well-known prefix (RFC 6052): reaches the embedded IPv4 address' },
  { cidr: '64:ff9b:1::/48', class: 'nat64', why: 'local-use NAT64 (RFC 8215)' },
  { cidr: '100::/64', class: 'discard', why: 'discard-only (RFC 6666)' },
  { cidr: '2001::/23', class: 'reserved', description: 'an IETF protocol-assignment address', why: 'IETF protocol assignments (RFC 2928)' },
  { cidr: '2001::/32', class: 'teredo', why: 'Teredo (RFC 4380): tunnels to an obfuscated IPv4 address' },
  { cidr: '2001:2::/48', class: 'benchmarking', why: 'benchmarking (RFC 5180)' },
  { cidr: '2001:db8::/32', class: 'documentation', why: 'documentation (RFC 3849)' },
  { cidr: '2002::/16', class: '6to4', embeds: 'sixToFour', why: '6to4 (RFC 3056): reaches the embedded IPv4 address' },
  { cidr: '2620:4f:8000::/48', class: 'reserved', description: 'a reserved AS112 DNS service address', why: 'AS112 direct delegation (RFC 7534)' },
  { cidr: '3fff::/20', class: 'documentation', why: 'documentation (RFC 9637)' },
  { cidr: 'fc00::/7', class: 'unique-local', why: 'unique local addresses (RFC 4193), the IPv6 "private" space' },
  { cidr: 'fe80::/10', class: 'link-local', why: 'link-local unicast (RFC 4291)' },
  { cidr: 'fec0::/10', class: 'site-local', why: 'deprecated site-local (RFC 3879)' },
  { cidr: 'ff00::/8', class: 'multicast', why: 'multicast (RFC 4291)' },
];

/** The only IPv6 space we deliver to (minus the carve-outs above). */
export const IPV6_GLOBAL_UNICAST = '2000::/3';

/**
 * Host names refused before any DNS lookup (defence in depth: their addresses would be
 * blocked anyway, but a custom /etc/hosts or search domain could map them elsewhere).
 * Matched after normalisation (lower case, no trailing dot).
 */
export const BLOCKED_HOSTNAMES: Readonly<Record<string, AddressClass>> = {
  localhost: 'loopback',
  'metadata.google.internal': 'metadata',
  'metadata.goog': 'metadata',
  metadata: 'metadata',
  'instance-data': 'metadata',
  'instance-data.ec2.internal': 'metadata',
};

/** Suffixes refused like the names above: RFC 6761 says *.localhost is loopback. */
export const BLOCKED_HOSTNAME_SUFFIXES: Readonly<Record<string, AddressClass>> = {
  '.localhost': 'loopback',
};
