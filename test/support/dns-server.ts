import * as dgram from 'node:dgram';
import { isIP } from 'node:net';

/**
 * A real DNS server on 127.0.0.1 (UDP, random port) for tests: answers A/AAAA from a table,
 * NXDOMAIN for unknown names, and never answers names the `blackHole` test matches (a
 * nameserver that drops queries, as a dead authoritative server does). `queries` records what
 * arrived, so a test can prove the cache kept a name from being asked again.
 */
export class TestDnsServer {
  readonly queries: { name: string; type: 'A' | 'AAAA' | number }[] = [];
  /** Names (lower case, no trailing dot) → addresses of both families. */
  records = new Map<string, string[]>();
  blackHole: (name: string) => boolean = () => false;
  ttlSeconds = 60;

  private constructor(private readonly socket: dgram.Socket) {
    socket.on('message', (msg, rinfo) => this.onMessage(msg, rinfo));
  }

  static async start(records: Record<string, string[]> = {}, opts: { blackHole?: (name: string) => boolean; port?: number } = {}): Promise<TestDnsServer> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(opts.port ?? 0, '127.0.0.1', () => resolve());
    });
    const server = new TestDnsServer(socket);
    for (const [name, addresses] of Object.entries(records)) server.records.set(name.toLowerCase(), addresses);
    if (opts.blackHole) server.blackHole = opts.blackHole;
    return server;
  }

  /** `127.0.0.1:PORT`, as SSRF_DNS_SERVERS and dns.setServers take it. */
  get address(): string {
    return `127.0.0.1:${this.socket.address().port}`;
  }

  queriesFor(name: string): number {
    return this.queries.filter((q) => q.name === name).length;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }

  private onMessage(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    const q = parseQuestion(msg);
    if (!q) return;
    const type = q.qtype === 1 ? 'A' : q.qtype === 28 ? 'AAAA' : q.qtype;
    this.queries.push({ name: q.name, type });
    if (this.blackHole(q.name)) return;
    const all = this.records.get(q.name);
    const wanted = (all ?? []).filter((a) => isIP(a) === (q.qtype === 1 ? 4 : q.qtype === 28 ? 6 : -1));
    const rcode = all === undefined ? 3 : 0; // NXDOMAIN, or NOERROR (maybe with no answers: NODATA)
    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0);
    header.writeUInt16BE(0x8180 | rcode, 2); // response, recursion desired + available
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(wanted.length, 6);
    const answers = wanted.map((address) => {
      const rdata = isIP(address) === 4 ? Buffer.from(address.split('.').map(Number)) : ipv6Bytes(address);
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0); // pointer to the question's name
      rr.writeUInt16BE(q.qtype, 2);
      rr.writeUInt16BE(1, 4); // IN
      rr.writeUInt32BE(this.ttlSeconds, 6);
      rr.writeUInt16BE(rdata.length, 10);
      return Buffer.concat([rr, rdata]);
    });
    this.socket.send(Buffer.concat([header, msg.subarray(12, q.end), ...answers]), rinfo.port, rinfo.address);
  }
}

function parseQuestion(msg: Buffer): { name: string; qtype: number; end: number } | null {
  if (msg.length < 17 || msg.readUInt16BE(4) !== 1) return null;
  const labels: string[] = [];
  let at = 12;
  while (at < msg.length) {
    const len = msg[at];
    if (len === 0) break;
    if (len > 63 || at + 1 + len > msg.length) return null;
    labels.push(msg.subarray(at + 1, at + 1 + len).toString('latin1'));
    at += 1 + len;
  }
  if (at + 5 > msg.length) return null;
  return { name: labels.join('.').toLowerCase(), qtype: msg.readUInt16BE(at + 1), end: at + 5 };
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail] = address.includes('::') ? address.split('::') : [address, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}
