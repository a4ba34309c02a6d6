import fc from 'fast-check';
import { parseCidr, parseCidrList } from './cidr';
import { classifyAddress, classifyHostname } from './classify';
import { AddressClass, CLASS_DESCRIPTIONS } from './ranges';

function cls(ip: string, policy?: Parameters<typeof classifyAddress>[1]): AddressClass | 'allowed' {
  const v = classifyAddress(ip, policy);
  return v.blocked ? v.class : 'allowed';
}

describe('classifyAddress: IPv4 block table', () => {
  it.each<[string, AddressClass]>([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['0.255.255.255', 'unspecified'],
    ['10.0.0.0', 'private'],
    ['10.0.0.5', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.0', 'shared'],
    ['100.100.1.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['127.0.0.1', 'loopback'],
    ['127.0.0.0', 'loopback'],
    ['127.1.2.3', 'loopback'],
    ['127.255.255.255', 'loopback'],
    ['169.254.0.1', 'link-local'],
    ['169.254.255.255', 'link-local'],
    ['169.254.169.253', 'link-local'],
    ['172.16.0.0', 'private'],
    ['172.20.10.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.1', 'reserved'],
    ['192.0.0.9', 'reserved'],
    ['192.0.0.255', 'reserved'],
    ['192.0.2.0', 'documentation'],
    ['192.0.2.123', 'documentation'],
    ['192.31.196.1', 'reserved'],
    ['192.52.193.1', 'reserved'],
    ['192.88.99.1', '6to4'],
    ['192.168.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['192.168.255.255', 'private'],
    ['192.175.48.6', 'reserved'],
    ['198.18.0.0', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.255', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.0', 'reserved'],
    ['250.1.2.3', 'reserved'],
    ['255.255.255.254', 'reserved'],
    ['255.255.255.255', 'broadcast'],
  ])('%s is %s', (ip, expected) => {
    expect(cls(ip)).toBe(expected);
  });
});

describe('classifyAddress: cloud metadata addresses', () => {
  it.each([
    '169.254.169.254',
    '169.254.170.2',
    '169.254.170.23',
    'fd00:ec2::254',
    'fd00:ec2::23',
    '100.100.100.200',
    '192.0.0.192',
    '168.63.129.16',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    '2002:a9fe:a9fe::1',
  ])('%s is metadata', (ip) => {
    const v = classifyAddress(ip);
    expect(v).toMatchObject({ blocked: true, class: 'metadata' });
    if (v.blocked) expect(v.description).toMatch(/^a cloud metadata-service address/);
  });

  it('neighbours of 168.63.129.16 stay public', () => {
    expect(cls('168.63.129.15')).toBe('allowed');
    expect(cls('168.63.129.17')).toBe('allowed');
  });
});

describe('classifyAddress: IPv6', () => {
  it.each<[string, AddressClass]>([
    ['::', 'unspecified'],
    ['0:0:0:0:0:0:0:0', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    // IPv4-mapped: reported with the embedded IPv4 class
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['0:0:0:0:0:ffff:a00:1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:192.168.1.1', 'private'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::ffff:8.8.8.8', 'ipv4-mapped'],
    ['::ffff:5db8:d822', 'ipv4-mapped'],
    // IPv4-compatible (deprecated)
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::8.8.8.8', 'ipv4-compatible'],
    ['::2', 'unspecified'],
    // SIIT
    ['::ffff:0:7f00:1', 'loopback'],
    ['::ffff:0:808:808', 'ipv4-translated'],
    // NAT64
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::808:808', 'nat64'],
    ['64:ff9b:1::1', 'nat64'],
    ['64:ff9b:1:ffff::808:808', 'nat64'],
    // discard
    ['100::1', 'discard'],
    // 2001::/23 carve-outs
    ['2001::1', 'teredo'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
    ['2001:2::1', 'benchmarking'],
    ['2001:10::1', 'reserved'],
    ['2001:20::1', 'reserved'],
    ['2001:1ff::1', 'reserved'],
    ['2001:db8::1', 'documentation'],
    ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation'],
    // 6to4
    ['2002:7f00:1::', 'loopback'],
    ['2002:a00:1::1', 'private'],
    ['2002:808:808::1', '6to4'],
    // AS112 / documentation
    ['2620:4f:8000::1', 'reserved'],
    ['3fff::1', 'documentation'],
    ['3fff:fff:ffff::1', 'documentation'],
    // private-ish scopes
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fdff:ffff::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fec0::1', 'site-local'],
    ['feff::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['ff05::1:3', 'multicast'],
    // outside 2000::/3
    ['1::1', 'not-global'],
    ['4000::1', 'not-global'],
    ['5f00::1', 'not-global'],
    ['8000::1', 'not-global'],
    ['e000::1', 'not-global'],
    ['fe00::1', 'not-global'],
    ['2606:4700:4700::1111%eth0', 'not-global'],
  ])('%s is %s', (ip, expected) => {
    expect(cls(ip)).toBe(expected);
  });
});

describe('classifyAddress: public addresses are allowed', () => {
  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '9.9.9.9',
    '2606:4700:4700::1111',
    '2a00:1450:4001::200e',
    '2001:4860:4860::8888',
    '2001:200::1',
    '2003::1',
    '2620:4f:8001::1',
    '3ffe::1',
    '3fff:1000::1',
    // range edges just outside blocks
    '1.0.0.0',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.255',
    '192.0.3.0',
    '192.88.98.255',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '198.51.99.255',
    '198.51.101.0',
    '203.0.112.255',
    '203.0.114.0',
    '223.255.255.255',
  ])('%s is allowed', (ip) => {
    expect(classifyAddress(ip)).toEqual({ blocked: false });
  });
});

describe('classifyAddress: only canonical addresses are accepted', () => {
  it.each(['127.1', '0x7f.0.0.1', '010.0.0.1', '2130706433', '017700000001', 'localhost', '', ' 8.8.8.8', '8.8.8.8 ', '1.2.3.4/32', '[::1]', '256.1.1.1', '1.2.3', '::ffff:127.0.0.1:80', 'example.com'])(
    '%j is invalid (blocked)',
    (ip) => {
      expect(classifyAddress(ip)).toMatchObject({ blocked: true, class: 'invalid', description: 'not a valid IP address' });
    },
  );

  it('non-strings are invalid', () => {
    expect(classifyAddress(undefined as unknown as string)).toMatchObject({ blocked: true, class: 'invalid' });
  });
});

describe('classifyAddress: descriptions', () => {
  it.each<[string, string]>([
    ['10.0.0.5', 'a private RFC 1918 address'],
    ['127.0.0.1', 'a loopback address'],
    ['169.254.169.254', 'a cloud metadata-service address'],
    ['169.254.1.1', 'a link-local address'],
    ['4000::1', 'not a public IP address'],
    ['::ffff:127.0.0.1', 'a loopback address (127.0.0.1 embedded in an IPv4-mapped IPv6 address)'],
    ['64:ff9b::a00:1', 'a private RFC 1918 address (10.0.0.1 embedded in a NAT64 translation address)'],
    ['2002:7f00:1::', 'a loopback address (127.0.0.1 embedded in a 6to4 transition address)'],
    ['::ffff:8.8.8.8', 'an IPv4-mapped IPv6 address'],
  ])('%s → %s', (ip, description) => {
    expect(classifyAddress(ip)).toMatchObject({ blocked: true, description });
  });

  it('every class has a phrase that reads after "is"', () => {
    for (const phrase of Object.values(CLASS_DESCRIPTIONS)) {
      expect(phrase).toMatch(/^(a|an|the|not) /);
    }
  });

  it('reports the matched range for logs', () => {
    expect(classifyAddress('10.1.2.3')).toMatchObject({ range: '10.0.0.0/8' });
    expect(classifyAddress('169.254.169.254')).toMatchObject({ range: '169.254.169.254/32' });
  });
});

describe('classifyAddress: operator overrides', () => {
  const P = (allow = '', deny = '') => ({ allow: parseCidrList(allow), deny: parseCidrList(deny) });

  it.each<[string, string, string, AddressClass | 'allowed']>([
    // [allow, deny, ip, expected]
    ['127.0.0.1/32', '', '127.0.0.1', 'allowed'],
    ['127.0.0.1/32', '', '127.0.0.2', 'loopback'],
    ['127.0.0.1', '', '127.0.0.1', 'allowed'],
    ['10.0.0.0/8', '', '10.20.30.40', 'allowed'],
    ['10.0.0.0/8', '', '192.168.1.1', 'private'],
    ['10.0.0.0/8, 192.168.0.0/16', '', '192.168.1.1', 'allowed'],
    ['::1/128', '', '::1', 'allowed'],
    ['fd00::/8', '', 'fd12::1', 'allowed'],
    // metadata: broad allows do not open it…
    ['169.254.0.0/16', '', '169.254.1.1', 'allowed'],
    ['169.254.0.0/16', '', '169.254.169.254', 'metadata'],
    ['0.0.0.0/0', '', '169.254.169.254', 'metadata'],
    ['0.0.0.0/0', '', '168.63.129.16', 'metadata'],
    ['0.0.0.0/0', '', '10.1.1.1', 'allowed'],
    ['fd00::/8', '', 'fd00:ec2::254', 'metadata'],
    ['::/0', '', 'fd00:ec2::23', 'metadata'],
    // …only an exact host entry does
    ['169.254.169.254/32', '', '169.254.169.254', 'allowed'],
    ['fd00:ec2::254/128', '', 'fd00:ec2::254', 'allowed'],
    // IPv4 allow entries do not cover IPv6 spellings of the same address
    ['127.0.0.1/32', '', '::ffff:127.0.0.1', 'loopback'],
    ['127.0.0.0/8', '', '64:ff9b::7f00:1', 'loopback'],
    // deny adds blocks and wins over allow
    ['', '8.8.8.0/24', '8.8.8.8', 'denied'],
    ['', '8.8.8.0/24', '8.8.4.4', 'allowed'],
    ['', '2606:4700::/32', '2606:4700:4700::1111', 'denied'],
    ['10.0.0.0/8', '10.0.0.0/24', '10.0.0.1', 'denied'],
    ['10.0.0.0/8', '10.0.0.0/24', '10.0.1.1', 'allowed'],
    ['8.8.8.8/32', '8.8.8.8/32', '8.8.8.8', 'denied'],
    // invalid input is never allowed
    ['0.0.0.0/0', '', '127.1', 'invalid'],
  ])('allow=%j deny=%j: %s → %s', (allow, deny, ip, expected) => {
    expect(cls(ip, P(allow, deny))).toBe(expected);
  });
});

describe('parseCidrList', () => {
  it.each<[string, string[]]>([
    ['', []],
    ['  ,  ', []],
    ['127.0.0.1/32', ['127.0.0.1/32']],
    ['10.0.0.0/8,192.168.0.0/16', ['10.0.0.0/8', '192.168.0.0/16']],
    [' 10.0.0.0/8 , fd00::/8 \n 127.0.0.1 ', ['10.0.0.0/8', 'fd00::/8', '127.0.0.1/32']],
    ['::1', ['::1/128']],
    ['0.0.0.0/0', ['0.0.0.0/0']],
    ['2001:DB8::/32', ['2001:db8::/32']],
  ])('%j → %j', (text, expected) => {
    expect(parseCidrList(text).map((c) => c.text)).toEqual(expected);
  });

  it.each<[string, RegExp]>([
    ['10.0.0.0/33', /invalid CIDR "10.0.0.0\/33": prefix length must be an integer from 0 to 32/],
    ['fd00::/129', /prefix length must be an integer from 0 to 128/],
    ['10.0.0.0/', /prefix length/],
    ['10.0.0.0/-1', /prefix length/],
    ['10.0.0.0/8.5', /prefix length/],
    ['10.0.0.1/8', /host bits are set; did you mean 10.0.0.0\/8/],
    ['127.1/32', /"127.1" is not an IPv4 or IPv6 address/],
    ['010.0.0.0/8', /not an IPv4 or IPv6 address/],
    ['example.com/24', /not an IPv4 or IPv6 address/],
    ['fe80::1%eth0/128', /not an IPv4 or IPv6 address/],
    ['10.0.0.0/8,bogus', /invalid CIDR "bogus"/],
  ])('%j throws', (text, message) => {
    expect(() => parseCidrList(text)).toThrow(message);
  });
});

describe('classifyHostname', () => {
  it.each<[string, AddressClass | 'allowed']>([
    ['localhost', 'loopback'],
    ['foo.localhost', 'loopback'],
    ['a.b.localhost', 'loopback'],
    ['metadata.google.internal', 'metadata'],
    ['metadata.goog', 'metadata'],
    ['metadata', 'metadata'],
    ['instance-data', 'metadata'],
    ['example.com', 'allowed'],
    ['localhost.example.com', 'allowed'],
    ['notlocalhost', 'allowed'],
    ['metadata.example.com', 'allowed'],
    ['constructor', 'allowed'],
    ['__proto__', 'allowed'],
  ])('%s → %s', (host, expected) => {
    const v = classifyHostname(host);
    expect(v.blocked ? v.class : 'allowed').toBe(expected);
  });
});

// ---------------------------------------------------------------------------------------
// Property tests. The oracle below is plain integer arithmetic, independent of ipaddr.js.

const v4ToInt = (ip: string) => ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
const intToV4 = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');

const BLOCKED_V4: Array<[string, number]> = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.31.196.0', 24], ['192.52.193.0', 24],
  ['192.88.99.0', 24], ['192.168.0.0', 16], ['192.175.48.0', 24], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4], ['255.255.255.255', 32],
];
const inV4Block = (n: number) =>
  BLOCKED_V4.some(([base, len]) => Math.floor(n / 2 ** (32 - len)) === Math.floor(v4ToInt(base) / 2 ** (32 - len))) ||
  n === v4ToInt('168.63.129.16');

const arbV4In = (base: string, len: number) =>
  fc.integer({ min: 0, max: 2 ** (32 - len) - 1 }).map((off) => intToV4(v4ToInt(base) + off));

const hex16 = (n: number) => n.toString(16);
/** A random IPv6 address whose first `len` bits equal those of `prefix` (given as 8 parts). */
const arbV6In = (prefix: number[], len: number) =>
  fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }).map((rand) =>
    rand
      .map((r, i) => {
        const fixed = Math.max(0, Math.min(16, len - i * 16));
        const mask = fixed === 0 ? 0 : (0xffff << (16 - fixed)) & 0xffff;
        return hex16((prefix[i] & mask) | (r & ~mask & 0xffff));
      })
      .join(':'),
  );

describe('property: blocked IPv4 ranges never allowed', () => {
  it.each(BLOCKED_V4)('random address in %s/%d is blocked', (base, len) => {
    fc.assert(
      fc.property(arbV4In(base, len), (ip) => {
        expect(classifyAddress(ip).blocked).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('any IPv4 address is blocked exactly when the oracle says so', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (n) => {
        expect(classifyAddress(intToV4(n)).blocked).toBe(inV4Block(n));
      }),
      { numRuns: 5000 },
    );
  });

  it('IPv4-mapped, compatible, NAT64 and 6to4 forms of any IPv4 address are blocked', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (n) => {
        const hi = hex16(Math.floor(n / 65536));
        const lo = hex16(n % 65536);
        for (const ip of [`::ffff:${intToV4(n)}`, `::ffff:${hi}:${lo}`, `::${hi}:${lo}`, `64:ff9b::${hi}:${lo}`, `2002:${hi}:${lo}::1`]) {
          expect(classifyAddress(ip).blocked).toBe(true);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('the mapped form of a blocked IPv4 address reports the IPv4 class', () => {
    fc.assert(
      fc.property(fc.constantFrom(...BLOCKED_V4).chain(([b, l]) => arbV4In(b, l)), (ip) => {
        const v4 = classifyAddress(ip);
        const mapped = classifyAddress(`::ffff:${ip}`);
        expect(mapped.blocked && v4.blocked && mapped.class === v4.class).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('property: blocked IPv6 ranges never allowed', () => {
  it.each<[string, number[], number]>([
    ['fc00::/7', [0xfc00, 0, 0, 0, 0, 0, 0, 0], 7],
    ['fe80::/10', [0xfe80, 0, 0, 0, 0, 0, 0, 0], 10],
    ['fec0::/10', [0xfec0, 0, 0, 0, 0, 0, 0, 0], 10],
    ['ff00::/8', [0xff00, 0, 0, 0, 0, 0, 0, 0], 8],
    ['2001::/23', [0x2001, 0, 0, 0, 0, 0, 0, 0], 23],
    ['2001:db8::/32', [0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32],
    ['2002::/16', [0x2002, 0, 0, 0, 0, 0, 0, 0], 16],
    ['2620:4f:8000::/48', [0x2620, 0x4f, 0x8000, 0, 0, 0, 0, 0], 48],
    ['3fff::/20', [0x3fff, 0, 0, 0, 0, 0, 0, 0], 20],
    ['64:ff9b::/96', [0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96],
    ['64:ff9b:1::/48', [0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48],
    ['::ffff:0:0/96', [0, 0, 0, 0, 0, 0xffff, 0, 0], 96],
    ['::/96', [0, 0, 0, 0, 0, 0, 0, 0], 96],
    ['::/3 (outside 2000::/3)', [0, 0, 0, 0, 0, 0, 0, 0], 3],
    ['4000::/2 (outside 2000::/3)', [0x4000, 0, 0, 0, 0, 0, 0, 0], 2],
    ['8000::/1 (outside 2000::/3)', [0x8000, 0, 0, 0, 0, 0, 0, 0], 1],
  ])('random address in %s is blocked', (_name, prefix, len) => {
    fc.assert(
      fc.property(arbV6In(prefix, len), (ip) => {
        expect(classifyAddress(ip).blocked).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('property: known-public blocks are allowed', () => {
  it.each<[string, number]>([
    ['1.0.0.0', 8],
    ['8.0.0.0', 8],
    ['13.0.0.0', 8],
    ['34.0.0.0', 8],
    ['93.184.0.0', 16],
    ['151.101.0.0', 16],
    ['185.0.0.0', 8],
  ])('random address in %s/%d is allowed', (base, len) => {
    fc.assert(
      fc.property(arbV4In(base, len), (ip) => {
        expect(classifyAddress(ip)).toEqual({ blocked: false });
      }),
      { numRuns: 200 },
    );
  });

  it.each<[string, number[], number]>([
    ['2a00::/12', [0x2a00, 0, 0, 0, 0, 0, 0, 0], 12],
    ['2400::/12', [0x2400, 0, 0, 0, 0, 0, 0, 0], 12],
    ['2800::/12', [0x2800, 0, 0, 0, 0, 0, 0, 0], 12],
    ['2001:4860::/32', [0x2001, 0x4860, 0, 0, 0, 0, 0, 0], 32],
    ['2606:4700::/32', [0x2606, 0x4700, 0, 0, 0, 0, 0, 0], 32],
  ])('random address in %s is allowed', (_name, prefix, len) => {
    fc.assert(
      fc.property(arbV6In(prefix, len), (ip) => {
        expect(classifyAddress(ip)).toEqual({ blocked: false });
      }),
      { numRuns: 300 },
    );
  });

  it('an allow CIDR unblocks every (non-metadata) address inside it', () => {
    const policy = { allow: [parseCidr('10.0.0.0/8')] };
    fc.assert(
      fc.property(arbV4In('10.0.0.0', 8), (ip) => {
        expect(classifyAddress(ip, policy)).toEqual({ blocked: false });
      }),
    );
  });
});
