import fc from 'fast-check';
import { AppError } from '../common/errors';
import { TestDnsServer } from '../../test/support/dns-server';
import { DnsBusyError, DnsResolutionError, DnsResolver, StaticDnsResolver, SystemDnsResolver } from './resolver';
import { DestinationBlockedError, parsePrivateGrant, parsePrivateGrants, SsrfPolicy, SsrfPolicyOptions } from './ssrf-policy';

const STD = { allowNonstandardPort: false };
const ANY_PORT = { allowNonstandardPort: true };

const dns = () =>
  new StaticDnsResolver({
    'hooks.example.com': ['10.0.0.5'],
    'public.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'public6.example.com': ['2a00:1450:4001::200e'],
    'mixed.example.com': ['93.184.216.34', '10.0.0.5'],
    'mixed-last.example.com': ['8.8.8.8', '1.1.1.1', '192.168.1.10'],
    'mixed6.example.com': ['93.184.216.34', 'fd00::1'],
    'mapped.example.com': ['8.8.8.8', '::ffff:127.0.0.1'],
    'metadata.example.com': ['169.254.169.254'],
    'azure.example.com': ['168.63.129.16'],
    'imds6.example.com': ['fd00:ec2::254'],
    'cgnat.example.com': ['100.64.1.1'],
    'zero.example.com': ['0.0.0.0'],
    'loop6.example.com': ['::1'],
    'linklocal6.example.com': ['fe80::1'],
    'dup.example.com': ['8.8.8.8', '8.8.8.8', '2001:4860:4860:0:0:0:0:8888'],
    'garbage.example.com': ['not-an-ip'],
    'shorthand.example.com': ['127.1'],
    'localhost': ['93.184.216.34'],
    'metadata.google.internal': ['93.184.216.34'],
    '127.0.0.1.nip.io': ['127.0.0.1'],
    'nowhere.example': [],
    'receiver.test': ['127.0.0.1'],
    'private.test': ['10.1.2.3'],
  });

const policy = (opts: SsrfPolicyOptions = {}, resolver: DnsResolver = dns()) => new SsrfPolicy(opts, resolver);

async function rejection(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected checkUrl to reject');
}

describe('SsrfPolicy.checkUrl: blocked destinations (422 WEBHOOK_DESTINATION_BLOCKED)', () => {
  it.each<[string, string]>([
    // literal IPv4 and every encoding WHATWG canonicalises
    ['https://127.0.0.1/', 'destination 127.0.0.1 is a loopback address'],
    ['https://2130706433/', 'destination 127.0.0.1 is a loopback address'],
    ['https://0x7f000001/', 'destination 127.0.0.1 is a loopback address'],
    ['https://017700000001/', 'destination 127.0.0.1 is a loopback address'],
    ['https://127.1/', 'destination 127.0.0.1 is a loopback address'],
    ['https://0x7f.1/', 'destination 127.0.0.1 is a loopback address'],
    ['https://0177.0.0.01/', 'destination 127.0.0.1 is a loopback address'],
    ['https://１２７.０.０.１/', 'destination 127.0.0.1 is a loopback address'],
    ['https://%31%32%37.0.0.1/', 'destination 127.0.0.1 is a loopback address'],
    ['https://127.0.0.1./', 'destination 127.0.0.1 is a loopback address'],
    ['https://127.0.0.1:443/', 'destination 127.0.0.1 is a loopback address'],
    ['https://0/', 'destination 0.0.0.0 is an unspecified ("this network") address'],
    ['https://0.0.0.0/', 'destination 0.0.0.0 is an unspecified ("this network") address'],
    ['https://10.0.0.5/', 'destination 10.0.0.5 is a private RFC 1918 address'],
    ['https://167772165/', 'destination 10.0.0.5 is a private RFC 1918 address'],
    ['https://172.16.0.1/', 'destination 172.16.0.1 is a private RFC 1918 address'],
    ['https://192.168.0.1/', 'destination 192.168.0.1 is a private RFC 1918 address'],
    ['https://0xc0a80001/', 'destination 192.168.0.1 is a private RFC 1918 address'],
    ['https://169.254.169.254/', 'destination 169.254.169.254 is a cloud metadata-service address'],
    ['https://0xa9fea9fe/', 'destination 169.254.169.254 is a cloud metadata-service address'],
    ['https://2852039166/', 'destination 169.254.169.254 is a cloud metadata-service address'],
    ['https://169.254.170.2/', 'destination 169.254.170.2 is a cloud metadata-service address'],
    ['https://100.100.100.200/', 'destination 100.100.100.200 is a cloud metadata-service address'],
    ['https://168.63.129.16/', 'destination 168.63.129.16 is a cloud metadata-service address'],
    ['https://192.0.0.192/', 'destination 192.0.0.192 is a cloud metadata-service address'],
    ['https://169.254.1.1/', 'destination 169.254.1.1 is a link-local address'],
    ['https://100.64.0.1/', 'destination 100.64.0.1 is a shared carrier-grade NAT address (RFC 6598)'],
    ['https://198.18.0.1/', 'destination 198.18.0.1 is a benchmarking address'],
    ['https://192.0.2.1/', 'destination 192.0.2.1 is a documentation-only address'],
    ['https://224.0.0.1/', 'destination 224.0.0.1 is a multicast address'],
    ['https://255.255.255.255/', 'destination 255.255.255.255 is the limited broadcast address'],
    ['https://240.0.0.1/', 'destination 240.0.0.1 is a reserved (future use) address'],
    // literal IPv6
    ['https://[::1]/', 'destination ::1 is a loopback address'],
    ['https://[0:0:0:0:0:0:0:1]/', 'destination ::1 is a loopback address'],
    ['https://[::]/', 'destination :: is an unspecified ("this network") address'],
    ['https://[::ffff:127.0.0.1]/', 'destination ::ffff:7f00:1 is a loopback address (127.0.0.1 embedded in an IPv4-mapped IPv6 address)'],
    ['https://[::ffff:7f00:1]/', 'destination ::ffff:7f00:1 is a loopback address (127.0.0.1 embedded in an IPv4-mapped IPv6 address)'],
    ['https://[0:0:0:0:0:ffff:a00:1]/', 'destination ::ffff:a00:1 is a private RFC 1918 address (10.0.0.1 embedded in an IPv4-mapped IPv6 address)'],
    ['https://[::ffff:169.254.169.254]/', 'destination ::ffff:a9fe:a9fe is a cloud metadata-service address (169.254.169.254 embedded in an IPv4-mapped IPv6 address)'],
    ['https://[::ffff:8.8.8.8]/', 'destination ::ffff:808:808 is an IPv4-mapped IPv6 address'],
    ['https://[::127.0.0.1]/', 'destination ::7f00:1 is a loopback address (127.0.0.1 embedded in an IPv4-compatible IPv6 address)'],
    ['https://[64:ff9b::a00:1]/', 'destination 64:ff9b::a00:1 is a private RFC 1918 address (10.0.0.1 embedded in a NAT64 translation address)'],
    ['https://[64:ff9b::8.8.8.8]/', 'destination 64:ff9b::808:808 is a NAT64 translation address'],
    ['https://[64:ff9b:1::1]/', 'destination 64:ff9b:1::1 is a NAT64 translation address'],
    ['https://[2002:7f00:1::]/', 'destination 2002:7f00:1:: is a loopback address (127.0.0.1 embedded in a 6to4 transition address)'],
    ['https://[2001::1]/', 'destination 2001::1 is a Teredo tunnelling address'],
    ['https://[2001:db8::1]/', 'destination 2001:db8::1 is a documentation-only address'],
    ['https://[3fff::1]/', 'destination 3fff::1 is a documentation-only address'],
    ['https://[fc00::1]/', 'destination fc00::1 is a unique-local IPv6 address'],
    ['https://[fd00:ec2::254]/', 'destination fd00:ec2::254 is a cloud metadata-service address'],
    ['https://[fd00:ec2::23]/', 'destination fd00:ec2::23 is a cloud metadata-service address'],
    ['https://[fe80::1]/', 'destination fe80::1 is a link-local address'],
    ['https://[FE80::1]/', 'destination fe80::1 is a link-local address'],
    ['https://[fec0::1]/', 'destination fec0::1 is a site-local IPv6 address'],
    ['https://[ff02::1]/', 'destination ff02::1 is a multicast address'],
    ['https://[100::1]/', 'destination 100::1 is a discard-only IPv6 address'],
    ['https://[4000::1]/', 'destination 4000::1 is not a public IP address'],
    // blocked names (even though the resolver would give a public address)
    ['https://localhost/', 'destination host localhost is a loopback address'],
    ['https://LOCALHOST/', 'destination host localhost is a loopback address'],
    ['https://localhost./', 'destination host localhost is a loopback address'],
    ['https://ｌｏｃａｌｈｏｓｔ/', 'destination host localhost is a loopback address'],
    ['https://api.localhost/', 'destination host api.localhost is a loopback address'],
    ['https://a.b.LOCALHOST./', 'destination host a.b.localhost is a loopback address'],
    ['https://metadata.google.internal/', 'destination host metadata.google.internal is a cloud metadata-service address'],
    ['https://metadata.google.internal./', 'destination host metadata.google.internal is a cloud metadata-service address'],
    ['https://METADATA.GOOGLE.INTERNAL/computeMetadata/v1/', 'destination host metadata.google.internal is a cloud metadata-service address'],
    ['https://metadata/', 'destination host metadata is a cloud metadata-service address'],
    // resolved names
    ['https://hooks.example.com/', 'destination 10.0.0.5 (resolved from hooks.example.com) is a private RFC 1918 address'],
    ['https://HOOKS.example.com./x', 'destination 10.0.0.5 (resolved from hooks.example.com) is a private RFC 1918 address'],
    ['https://mixed.example.com/', 'destination 10.0.0.5 (resolved from mixed.example.com) is a private RFC 1918 address'],
    ['https://mixed-last.example.com/', 'destination 192.168.1.10 (resolved from mixed-last.example.com) is a private RFC 1918 address'],
    ['https://mixed6.example.com/', 'destination fd00::1 (resolved from mixed6.example.com) is a unique-local IPv6 address'],
    ['https://mapped.example.com/', 'destination ::ffff:127.0.0.1 (resolved from mapped.example.com) is a loopback address (127.0.0.1 embedded in an IPv4-mapped IPv6 address)'],
    ['https://metadata.example.com/', 'destination 169.254.169.254 (resolved from metadata.example.com) is a cloud metadata-service address'],
    ['https://azure.example.com/', 'destination 168.63.129.16 (resolved from azure.example.com) is a cloud metadata-service address'],
    ['https://imds6.example.com/', 'destination fd00:ec2::254 (resolved from imds6.example.com) is a cloud metadata-service address'],
    ['https://cgnat.example.com/', 'destination 100.64.1.1 (resolved from cgnat.example.com) is a shared carrier-grade NAT address (RFC 6598)'],
    ['https://zero.example.com/', 'destination 0.0.0.0 (resolved from zero.example.com) is an unspecified ("this network") address'],
    ['https://loop6.example.com/', 'destination ::1 (resolved from loop6.example.com) is a loopback address'],
    ['https://linklocal6.example.com/', 'destination fe80::1 (resolved from linklocal6.example.com) is a link-local address'],
    ['https://127.0.0.1.nip.io/', 'destination 127.0.0.1 (resolved from 127.0.0.1.nip.io) is a loopback address'],
    ['https://garbage.example.com/', 'destination not-an-ip (resolved from garbage.example.com) is not a valid IP address'],
    ['https://shorthand.example.com/', 'destination 127.1 (resolved from shorthand.example.com) is not a valid IP address'],
    ['https://nowhere.example/', 'destination host nowhere.example does not resolve'],
    ['https://unknown.example.org/', 'destination host unknown.example.org does not resolve'],
    // port without the flag
    ['https://public.example.com:8443/', 'destination port 8443 is not allowed: only port 443 unless the webhook allows non-standard ports'],
    ['https://8.8.8.8:80/', 'destination port 80 is not allowed: only port 443 unless the webhook allows non-standard ports'],
  ])('%s', async (raw, message) => {
    const err = await rejection(policy().checkUrl(raw, STD));
    expect(err.code).toBe('WEBHOOK_DESTINATION_BLOCKED');
    expect(err.status).toBe(422);
    expect(err.message).toBe(message);
  });
});

describe('SsrfPolicy.checkUrl: malformed URLs are 400 VALIDATION_ERROR', () => {
  it.each([
    'http://public.example.com/',
    'http://127.0.0.1/',
    'https://evil@127.0.0.1/',
    'https://user:pass@example.com/',
    'https://public.example.com@127.0.0.1/',
    'https://[fe80::1%25eth0]/',
    'https://127.0.0.1\t/',
    'https://loc\nalhost/',
    '/relative',
    `https://public.example.com/${'x'.repeat(2100)}`,
    'https://public.example.com:0/',
  ])('%s', async (raw) => {
    const err = await rejection(policy().checkUrl(raw, ANY_PORT));
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.message).toMatch(/^url must /);
  });
});

describe('SsrfPolicy.checkUrl: allowed destinations', () => {
  it.each<[string, boolean, string, number, string[]]>([
    ['https://93.184.216.34/', false, '93.184.216.34', 443, ['93.184.216.34']],
    ['https://8.8.8.8/', false, '8.8.8.8', 443, ['8.8.8.8']],
    ['https://1.1.1.1/hook?x=1', false, '1.1.1.1', 443, ['1.1.1.1']],
    ['https://16843009/', false, '1.1.1.1', 443, ['1.1.1.1']],
    ['https://[2606:4700:4700::1111]/', false, '2606:4700:4700::1111', 443, ['2606:4700:4700::1111']],
    ['https://[2a00:1450:4001::200e]/', false, '2a00:1450:4001::200e', 443, ['2a00:1450:4001::200e']],
    ['https://public.example.com/', false, 'public.example.com', 443, ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']],
    ['https://PUBLIC.example.com./', false, 'public.example.com', 443, ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']],
    ['https://public.example.com:443/', false, 'public.example.com', 443, ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']],
    ['https://public.example.com:8443/', true, 'public.example.com', 8443, ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']],
    ['https://public6.example.com/', false, 'public6.example.com', 443, ['2a00:1450:4001::200e']],
    ['https://dup.example.com/', false, 'dup.example.com', 443, ['8.8.8.8', '2001:4860:4860::8888']],
    ['https://1.1.1.1:1/', true, '1.1.1.1', 1, ['1.1.1.1']],
    ['https://1.1.1.1:65535/', true, '1.1.1.1', 65535, ['1.1.1.1']],
  ])('%s (flag=%s)', async (raw, allowNonstandardPort, host, port, addresses) => {
    const dest = await policy().checkUrl(raw, { allowNonstandardPort });
    expect(dest.host).toBe(host);
    expect(dest.port).toBe(port);
    expect(dest.addresses).toEqual(addresses);
    expect(dest.url).toBeInstanceOf(URL);
    expect(dest.url.protocol).toBe('https:');
  });

  it('returns the canonical URL (no trailing dot, lower case host)', async () => {
    const dest = await policy().checkUrl('https://Public.Example.com.:8443/a/b?c=d', ANY_PORT);
    expect(dest.url.href).toBe('https://public.example.com:8443/a/b?c=d');
  });

  it('checkDestination is the delivery-time spelling of checkUrl and accepts a URL', async () => {
    const p = policy();
    const a = await p.checkDestination(new URL('https://public.example.com/'), STD);
    const b = await p.checkUrl('https://public.example.com/', STD);
    expect(a).toEqual(b);
  });
});

describe('SsrfPolicy: allow/deny overrides', () => {
  it.each<[SsrfPolicyOptions, string, boolean, string | null]>([
    // [options, url, allowNonstandardPort, expected error message or null for allowed]
    [{ allowCidrs: '127.0.0.1/32' }, 'https://127.0.0.1:8443/', true, null],
    [{ allowCidrs: '127.0.0.1/32' }, 'https://receiver.test:8443/', true, null],
    [{ allowCidrs: '127.0.0.1/32' }, 'https://127.0.0.2/', false, 'destination 127.0.0.2 is a loopback address'],
    [{ allowCidrs: '127.0.0.1/32' }, 'https://localhost/', false, 'destination host localhost is a loopback address'],
    [{ allowCidrs: '127.0.0.1/32' }, 'https://[::ffff:127.0.0.1]/', false, 'destination ::ffff:7f00:1 is a loopback address (127.0.0.1 embedded in an IPv4-mapped IPv6 address)'],
    [{ allowCidrs: '127.0.0.1/32' }, 'https://receiver.test:8443/', false, 'destination port 8443 is not allowed: only port 443 unless the webhook allows non-standard ports'],
    [{ allowCidrs: '10.0.0.0/8' }, 'https://private.test/', false, null],
    [{ allowCidrs: '10.0.0.0/8' }, 'https://mixed.example.com/', false, null],
    [{ allowCidrs: '10.0.0.0/8' }, 'https://mixed-last.example.com/', false, 'destination 192.168.1.10 (resolved from mixed-last.example.com) is a private RFC 1918 address'],
    [{ allowCidrs: '169.254.0.0/16' }, 'https://169.254.169.254/', false, 'destination 169.254.169.254 is a cloud metadata-service address'],
    [{ allowCidrs: '0.0.0.0/0' }, 'https://metadata.example.com/', false, 'destination 169.254.169.254 (resolved from metadata.example.com) is a cloud metadata-service address'],
    [{ allowCidrs: '169.254.169.254/32' }, 'https://169.254.169.254/', false, null],
    [{ allowCidrs: '0.0.0.0/0' }, 'https://metadata.google.internal/', false, 'destination host metadata.google.internal is a cloud metadata-service address'],
    [{ denyCidrs: '93.184.216.0/24' }, 'https://public.example.com/', false, 'destination 93.184.216.34 (resolved from public.example.com) is an address blocked by the operator deny list'],
    [{ denyCidrs: '2606:2800::/32' }, 'https://public.example.com/', false, 'destination 2606:2800:220:1:248:1893:25c8:1946 (resolved from public.example.com) is an address blocked by the operator deny list'],
    [{ denyCidrs: '8.8.8.8' }, 'https://8.8.8.8/', false, 'destination 8.8.8.8 is an address blocked by the operator deny list'],
    [{ denyCidrs: '8.8.8.8' }, 'https://1.1.1.1/', false, null],
    [{ allowCidrs: '10.0.0.0/8', denyCidrs: '10.0.0.0/24' }, 'https://10.0.0.9/', false, 'destination 10.0.0.9 is an address blocked by the operator deny list'],
    [{ allowCidrs: '10.0.0.0/8', denyCidrs: '10.0.0.0/24' }, 'https://private.test/', false, null],
  ])('%j %s', async (opts, raw, allowNonstandardPort, message) => {
    const check = policy(opts).checkUrl(raw, { allowNonstandardPort });
    if (message === null) {
      await expect(check).resolves.toMatchObject({ url: expect.any(URL) });
    } else {
      const err = await rejection(check);
      expect(err.code).toBe('WEBHOOK_DESTINATION_BLOCKED');
      expect(err.message).toBe(message);
    }
  });

  it('rejects a bad CIDR at construction time', () => {
    expect(() => policy({ allowCidrs: '10.0.0.0/33' })).toThrow(/invalid CIDR "10.0.0.0\/33"/);
    expect(() => policy({ denyCidrs: 'nope' })).toThrow(/invalid CIDR "nope"/);
  });

  it('exposes the parsed lists', () => {
    const p = policy({ allowCidrs: '127.0.0.1, fd00::/8', denyCidrs: '8.8.8.0/24' });
    expect(p.allowList.map((c) => c.text)).toEqual(['127.0.0.1/32', 'fd00::/8']);
    expect(p.denyList.map((c) => c.text)).toEqual(['8.8.8.0/24']);
    expect(p.classify('127.0.0.1')).toEqual({ blocked: false });
  });
});

describe('SsrfPolicy: exact allowed destinations (SSRF_ALLOW_DESTINATIONS)', () => {
  it.each<[string, string, string | null]>([
    // [allowDestinations, url, expected error or null]; every URL allows non-standard ports
    ['127.0.0.1:9443', 'https://127.0.0.1:9443/hooks', null],
    ['127.0.0.1:9443', 'https://127.0.0.1:9444/', 'destination 127.0.0.1 is a loopback address'],
    ['127.0.0.1:9443', 'https://127.0.0.2:9443/', 'destination 127.0.0.2 is a loopback address'],
    ['127.0.0.1:9443', 'https://receiver.test:9443/', 'destination 127.0.0.1 (resolved from receiver.test) is a loopback address'],
    ['127.0.0.1:9443', 'https://[::ffff:127.0.0.1]:9443/', 'destination ::ffff:7f00:1 is a loopback address (127.0.0.1 embedded in an IPv4-mapped IPv6 address)'],
    ['[::1]:9443, 127.0.0.1:443', 'https://[::1]:9443/', null],
    ['[::1]:9443, 127.0.0.1:443', 'https://127.0.0.1/', null],
  ])('%s lets %s through: %s', async (allowDestinations, raw, message) => {
    const check = policy({ allowDestinations }).checkUrl(raw, ANY_PORT);
    if (message === null) {
      await expect(check).resolves.toMatchObject({ addresses: [expect.any(String)] });
    } else {
      const err = await rejection(check);
      expect(err.code).toBe('WEBHOOK_DESTINATION_BLOCKED');
      expect(err.message).toBe(message);
    }
  });

  it('still needs the webhook to allow a non-standard port', async () => {
    const err = await rejection(policy({ allowDestinations: '127.0.0.1:9443' }).checkUrl('https://127.0.0.1:9443/', STD));
    expect(err.message).toMatch(/^destination port 9443 is not allowed/);
  });

  it('lets the operator deny list win', async () => {
    const err = await rejection(policy({ allowDestinations: '127.0.0.1:9443', denyCidrs: '127.0.0.0/8' }).checkUrl('https://127.0.0.1:9443/', ANY_PORT));
    expect(err.message).toBe('destination 127.0.0.1 is an address blocked by the operator deny list');
  });

  it.each(['localhost:9443', '127.0.0.1', '127.0.0.1:0', '127.0.0.1:70000', '::1:9443', '[127.0.0.1]:9443', '127.1:9443', '10.0.0.0/8:443'])(
    'refuses %s at construction time',
    (entry) => {
      expect(() => policy({ allowDestinations: entry })).toThrow(new RegExp(`"${entry.replace(/[.[\]/]/g, '\\$&')}"`));
    },
  );
});

describe('SsrfPolicy: DNS behaviour', () => {
  it('re-checks on every call: a host rebinding to a private address is blocked at delivery', async () => {
    const resolver = new StaticDnsResolver({ 'rebind.example.com': ['93.184.216.34'] });
    const p = policy({}, resolver);
    await expect(p.checkUrl('https://rebind.example.com/', STD)).resolves.toMatchObject({ addresses: ['93.184.216.34'] });
    resolver.set('rebind.example.com', ['127.0.0.1']);
    const err = await rejection(p.checkDestination('https://rebind.example.com/', STD));
    expect(err.message).toBe('destination 127.0.0.1 (resolved from rebind.example.com) is a loopback address');
  });

  it('fails closed when the resolver throws (timeout)', async () => {
    const failing: DnsResolver = {
      resolve: async (host) => {
        throw new DnsResolutionError(host, 'ETIMEOUT', 'DNS lookup timed out after 5000 ms');
      },
    };
    const err = await rejection(policy({}, failing).checkUrl('https://slow.example.com/', STD));
    expect(err.code).toBe('WEBHOOK_DESTINATION_BLOCKED');
    expect(err.message).toBe('destination host slow.example.com could not be resolved: DNS lookup timed out after 5000 ms');
  });

  it('does not leak internal error text from an unexpected resolver failure', async () => {
    const failing: DnsResolver = { resolve: async () => Promise.reject(new Error('secret internal detail')) };
    const err = await rejection(policy({}, failing).checkUrl('https://x.example.com/', STD));
    expect(err.message).toBe('destination host x.example.com could not be resolved: DNS lookup failed');
  });

  it('asks the resolver with the normalised host and never for IP literals', async () => {
    const seen: string[] = [];
    const spy: DnsResolver = {
      resolve: async (host) => {
        seen.push(host);
        return ['8.8.8.8'];
      },
    };
    const p = policy({}, spy);
    await p.checkUrl('https://Hooks.Example.COM./', STD);
    await p.checkUrl('https://8.8.8.8/', STD);
    await p.checkUrl('https://[2606:4700:4700::1111]/', STD);
    expect(seen).toEqual(['hooks.example.com']);
  });

  it('asks the resolver on behalf of the customer given', async () => {
    const resolve = jest.fn(async () => ['8.8.8.8']);
    const p = policy({}, { resolve });
    await p.checkUrl('https://a.example.com/', { ...STD, customerId: 'cus_1' });
    await p.checkDestination('https://b.example.com/', { ...STD, customerId: 'cus_2' });
    await p.checkUrl('https://c.example.com/', STD);
    expect(resolve.mock.calls).toEqual([
      ['a.example.com', { customerId: 'cus_1' }],
      ['b.example.com', { customerId: 'cus_2' }],
      ['c.example.com', {}],
    ]);
  });

  it('a customer over its DNS bound: 429 RATE_LIMITED with Retry-After on create, a retried DNS failure on delivery', async () => {
    const busy: DnsResolver = { resolve: async (host) => Promise.reject(new DnsBusyError(host, 8, 5)) };
    const api = await rejection(policy({}, busy).checkUrl('https://slow.example.com/', { ...STD, customerId: 'c' }));
    expect([api.code, api.status, api.headers]).toEqual(['RATE_LIMITED', 429, { 'Retry-After': '5' }]);
    expect(api.message).toBe('destination host slow.example.com could not be checked now: too many DNS lookups in progress for this customer (at most 8 at once); retry later');
    const delivery = await rejection(policy({}, busy).checkDestination('https://slow.example.com/', { ...STD, customerId: 'c' }));
    expect(delivery).toBeInstanceOf(DestinationBlockedError);
    expect((delivery as DestinationBlockedError).unresolved).toBe(true);
  });

  it('checks every answer of a real lookup: a public A with a private AAAA is blocked', async () => {
    const server = await TestDnsServer.start({ 'split.test': ['93.184.216.34', 'fd00::5'], 'fine.test': ['93.184.216.34', '2606:4700:4700::1111'] });
    try {
      const p = policy({}, new SystemDnsResolver({ servers: [server.address], hostsFile: null, timeoutMs: 1000 }));
      const err = await rejection(p.checkUrl('https://split.test/', STD));
      expect(err.message).toBe('destination fd00::5 (resolved from split.test) is a unique-local IPv6 address');
      await expect(p.checkUrl('https://fine.test/', STD)).resolves.toMatchObject({ addresses: ['93.184.216.34', '2606:4700:4700::1111'] });
    } finally {
      await server.close();
    }
  });

  it('never resolves a blocked name', async () => {
    const resolve = jest.fn(async () => ['8.8.8.8']);
    await rejection(policy({}, { resolve }).checkUrl('https://foo.localhost/', STD));
    expect(resolve).not.toHaveBeenCalled();
  });
});

// Encodings of random blocked IPv4 addresses all end up blocked through the URL path.
describe('SsrfPolicy: what a policy remembers between attempts', () => {
  const grants = (...g: string[]) => async () => parsePrivateGrants(g.join(' '));

  it('remembers the parse per port flag: the same URL is still refused without the flag after it passed with it', async () => {
    const p = policy();
    for (let i = 0; i < 3; i++) {
      await expect(p.checkDestination('https://public.example.com:8443/x', ANY_PORT)).resolves.toMatchObject({ port: 8443 });
      expect((await rejection(p.checkDestination('https://public.example.com:8443/x', STD))).code).toBe('WEBHOOK_DESTINATION_BLOCKED');
    }
  });

  it('asks for the grants on every attempt: a grant withdrawn between two attempts closes the destination', async () => {
    const p = policy();
    await expect(p.checkDestination('https://private.test/hook', { ...STD, privateGrants: grants('10.1.0.0/16') })).resolves.toMatchObject({ privateGrant: true });
    expect((await rejection(p.checkDestination('https://private.test/hook', { ...STD, privateGrants: grants() }))).code).toBe('WEBHOOK_DESTINATION_BLOCKED');
    await expect(p.checkDestination('https://[fd00::1]:7000/', { ...ANY_PORT, privateGrants: grants('fd00::/64:*') })).resolves.toMatchObject({ addresses: ['fd00::1'] });
    expect((await rejection(p.checkDestination('https://[fd00::1]:7000/', { ...ANY_PORT, privateGrants: grants() }))).code).toBe('WEBHOOK_DESTINATION_BLOCKED');
  });

  it('answers one canonical spelling per address on every attempt, and a fresh array each time', async () => {
    const p = policy();
    const a = await p.checkDestination('https://dup.example.com/', STD);
    const b = await p.checkDestination('https://dup.example.com/', STD);
    expect(a.addresses).toEqual(['8.8.8.8', '2001:4860:4860::8888']);
    expect(b.addresses).toEqual(a.addresses);
    expect(b.addresses).not.toBe(a.addresses);
    expect((await rejection(p.checkDestination('https://garbage.example.com/', STD))).code).toBe('WEBHOOK_DESTINATION_BLOCKED');
    expect((await rejection(p.checkDestination('https://garbage.example.com/', STD))).code).toBe('WEBHOOK_DESTINATION_BLOCKED');
  });
});

describe('property: encoded blocked IPv4 hosts are blocked end to end', () => {
  const ranges: Array<[number, number]> = [
    [0x7f000000, 8], [0x0a000000, 8], [0xac100000, 12], [0xc0a80000, 16], [0xa9fe0000, 16], [0x64400000, 10], [0x00000000, 8],
  ];
  const arb = fc
    .tuple(fc.constantFrom(...ranges), fc.nat(), fc.constantFrom('decimal', 'hex', 'octal', 'dotted', 'dotted-hex', 'mapped', 'nat64'))
    .map(([[base, len], r, form]) => {
      const n = base + (r % 2 ** (32 - len));
      const o = [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256);
      const hi = Math.floor(n / 65536).toString(16);
      const lo = (n % 65536).toString(16);
      switch (form) {
        case 'decimal': return `https://${n}/`;
        case 'hex': return `https://0x${n.toString(16)}/`;
        case 'octal': return `https://0${n.toString(8)}/`;
        case 'dotted-hex': return `https://${o.map((x) => `0x${x.toString(16)}`).join('.')}/`;
        case 'mapped': return `https://[::ffff:${hi}:${lo}]/`;
        case 'nat64': return `https://[64:ff9b::${hi}:${lo}]/`;
        default: return `https://${o.join('.')}/`;
      }
    });

  it('is never allowed', async () => {
    const p = policy();
    await fc.assert(
      fc.asyncProperty(arb, async (raw) => {
        const err = await rejection(p.checkUrl(raw, STD));
        expect(err.code).toBe('WEBHOOK_DESTINATION_BLOCKED');
      }),
      { numRuns: 500 },
    );
  });
});

describe('per-customer private allow-list', () => {
  const grants = (...g: string[]) => async () => parsePrivateGrants(g.join(' '));

  it('opens a private destination only to a customer whose grant covers its address and port', async () => {
    const p = policy();
    const ok = await p.checkUrl('https://private.test/hook', { ...STD, privateGrants: grants('10.1.0.0/16') });
    expect(ok).toMatchObject({ addresses: ['10.1.2.3'], privateGrant: true });
    // Another customer (no grant), another port, another range: still blocked.
    expect((await rejection(p.checkUrl('https://private.test/hook', { ...STD, privateGrants: grants() }))).code).toBe('WEBHOOK_DESTINATION_BLOCKED');
    expect((await rejection(p.checkUrl('https://private.test:8443/hook', { ...ANY_PORT, privateGrants: grants('10.1.0.0/16') }))).message).toMatch(/10\.1\.2\.3/);
    expect((await rejection(p.checkUrl('https://hooks.example.com/', { ...STD, privateGrants: grants('10.1.0.0/16') }))).code).toBe('WEBHOOK_DESTINATION_BLOCKED');
    await expect(p.checkUrl('https://private.test:8443/hook', { ...ANY_PORT, privateGrants: grants('10.1.2.3/32:8000-9000') })).resolves.toMatchObject({ port: 8443, privateGrant: true });
    await expect(p.checkUrl('https://[fd00::1]:7000/', { ...ANY_PORT, privateGrants: grants('fd00::/64:*') })).resolves.toMatchObject({ privateGrant: true });
  });

  it('never opens metadata addresses, denied ranges or blocked host names, and reads no grants for public destinations', async () => {
    let reads = 0;
    const counted = async () => {
      reads++;
      return parsePrivateGrants('0.0.0.0/0:* ::/0:*');
    };
    const p = policy({ denyCidrs: '10.1.2.0/24' });
    expect((await rejection(p.checkUrl('https://metadata.example.com/', { ...STD, privateGrants: counted }))).message).toMatch(/metadata/);
    expect((await rejection(p.checkUrl('https://private.test/', { ...STD, privateGrants: counted }))).code).toBe('WEBHOOK_DESTINATION_BLOCKED');
    expect((await rejection(p.checkUrl('https://localhost/', { ...STD, privateGrants: counted }))).code).toBe('WEBHOOK_DESTINATION_BLOCKED');
    expect(reads).toBe(0);
    const pub = await p.checkUrl('https://public.example.com/', { ...STD, privateGrants: counted });
    expect(pub.privateGrant).toBeUndefined();
    expect(reads).toBe(0);
  });

  it('parses CIDR[:PORTS] grants strictly into one canonical spelling', () => {
    expect(parsePrivateGrant('10.0.0.0/8').text).toBe('10.0.0.0/8:443');
    expect(parsePrivateGrant(' 10.20.0.7/32:8443,9000-9010 ').text).toBe('10.20.0.7/32:8443,9000-9010');
    expect(parsePrivateGrant('fd00:0001::/64:*').text).toBe('fd00:1::/64:*');
    for (const bad of ['10.0.0.1', '10.0.0.1/8', '10.0.0.0/8:0', '10.0.0.0/8:70000', '10.0.0.0/8:9-1', '10.0.0.0/8:', '10.0.0.0/8:http']) {
      expect(() => parsePrivateGrant(bad)).toThrow();
    }
    expect(parsePrivateGrants(null)).toEqual([]);
  });
});
