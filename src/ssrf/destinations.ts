import { isIP } from 'node:net';
import { parseIp } from './cidr';

/** One exact receiver let through the block list: an IP literal and a port, nothing around it. */
export interface AllowedDestination {
  readonly address: string;
  readonly port: number;
  /** `127.0.0.1:9443` or `[::1]:9443`, as logs and messages print it. */
  readonly text: string;
}

/**
 * Parses `SSRF_ALLOW_DESTINATIONS`: comma/space-separated `IPv4:port` or `[IPv6]:port` entries.
 * Unlike a CIDR this lets one receiver through (e.g. `trendhooks listen` on 127.0.0.1:9443), not a
 * range and not the other ports of the same host. Host names are refused: what a name resolves
 * to can change, the allowance must not.
 */
export function parseAllowDestinations(raw: string): AllowedDestination[] {
  const out: AllowedDestination[] = [];
  for (const entry of raw.split(/[\s,]+/).filter(Boolean)) {
    const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(entry);
    const host = m ? (m[1] ?? m[2]) : '';
    const family = isIP(host);
    if (!m || family === 0 || (m[1] !== undefined && family !== 6) || (m[2] !== undefined && family !== 4) || host.includes('%')) {
      throw new Error(`"${entry}" is not an IP:port destination (such as 127.0.0.1:9443 or [::1]:9443)`);
    }
    const port = Number(m[3]);
    if (port < 1 || port > 65535) throw new Error(`"${entry}": the port must be from 1 to 65535`);
    const address = String(parseIp(host)); // isIP() passed above
    out.push({ address, port, text: family === 6 ? `[${address}]:${port}` : `${address}:${port}` });
  }
  return out;
}
