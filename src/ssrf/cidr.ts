import { isIP } from 'node:net';
import * as ipaddr from 'ipaddr.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** A parsed CIDR block. `text` is the canonical form, used in logs. */
export interface Cidr {
  readonly address: IpAddress;
  readonly prefix: number;
  readonly text: string;
}

/**
 * Parses one CIDR ("10.0.0.0/8", "fd00::/8") or a bare address (taken as /32 or /128).
 * Strict on purpose: only canonical dotted-quad IPv4 (node's isIP), so "127.1/8" or
 * "010.0.0.0/8" cannot mean something other than what the operator read; no zone ids;
 * no host bits set, so a typo like "10.0.0.1/8" (meant /32?) is caught at boot.
 */
export function parseCidr(entry: string): Cidr {
  const text = entry.trim();
  const slash = text.indexOf('/');
  const addrText = slash === -1 ? text : text.slice(0, slash);
  const prefixText = slash === -1 ? undefined : text.slice(slash + 1);

  const family = isIP(addrText);
  if (family === 0 || addrText.includes('%')) {
    throw new Error(`invalid CIDR "${text}": "${addrText}" is not an IPv4 or IPv6 address`);
  }
  const address = parseIp(addrText) as IpAddress; // isIP() passed above
  const maxPrefix = family === 4 ? 32 : 128;

  let prefix = maxPrefix;
  if (prefixText !== undefined) {
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > maxPrefix) {
      throw new Error(`invalid CIDR "${text}": prefix length must be an integer from 0 to ${maxPrefix}`);
    }
    prefix = Number(prefixText);
  }

  const network = networkAddress(address, prefix);
  if (network.toString() !== address.toString()) {
    throw new Error(
      `invalid CIDR "${text}": host bits are set; did you mean ${network.toString()}/${prefix} or ${address.toString()}/${maxPrefix}?`,
    );
  }
  return { address, prefix, text: `${address.toString()}/${prefix}` };
}

/**
 * Parses an operator list: entries separated by commas and/or whitespace; empty entries
 * are ignored, so "" and " , " give []. Throws a clear Error naming the bad entry.
 */
export function parseCidrList(text: string): Cidr[] {
  if (typeof text !== 'string') {
    throw new Error('CIDR list must be a string of comma-separated CIDRs');
  }
  return text
    .split(/[\s,]+/)
    .filter((e) => e.length > 0)
    .map((e) => parseCidr(e));
}

/**
 * Parses a canonical address (anything node's net.isIP accepts); null otherwise.
 * A trailing dotted quad in IPv6 is rewritten to hex first: ipaddr.js reads "::8.8.8.8" as
 * ::ffff:8.8.8.8, while the OS (inet_pton) reads ::808:808. We must judge what the OS connects to.
 */
export function parseIp(text: string): IpAddress | null {
  const family = isIP(text);
  if (family === 0) return null;
  if (family === 4) return ipaddr.IPv4.parse(text);
  const [addr, zone] = text.split('%', 2);
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(addr);
  let hex = addr;
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    hex = `${addr.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  return ipaddr.IPv6.parse(zone === undefined ? hex : `${hex}%${zone}`);
}

/** True when `address` is inside `cidr` (same family only: an IPv4 CIDR never matches ::ffff:a.b.c.d). */
export function cidrContains(cidr: Cidr, address: IpAddress): boolean {
  if (cidr.address.kind() !== address.kind()) return false;
  return address.match(cidr.address, cidr.prefix);
}

function networkAddress(address: IpAddress, prefix: number): IpAddress {
  const bytes = address.toByteArray();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    bytes[i] &= (0xff << (8 - keep)) & 0xff;
  }
  return ipaddr.fromByteArray(bytes);
}
