import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TestDnsServer } from '../../test/support/dns-server';
import { DnsBusyError, DnsResolutionError, KeyedSemaphore, parseDnsServers, parseHostsFile, StaticDnsResolver, SystemDnsResolver } from './resolver';

/** Every SystemDnsResolver here asks a real DNS server on 127.0.0.1, never the machine's nameservers. */
describe('SystemDnsResolver (c-ares against a loopback DNS server)', () => {
  let dns: TestDnsServer;
  // A generous deadline where an answer is expected (a loaded CI runner once took over 300 ms for
  // the first query); the cases about timeouts set their own.
  const make = (opts: ConstructorParameters<typeof SystemDnsResolver>[0] = {}) =>
    new SystemDnsResolver({ servers: [dns.address], hostsFile: null, timeoutMs: 5000, ...opts });

  beforeEach(async () => {
    dns = await TestDnsServer.start(
      {
        'dual.test': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
        'v4.test': ['93.184.216.34', '93.184.216.35'],
        'v6only.test': ['2606:4700:4700::1111'],
        'empty.test': [],
        'ok.test': ['1.1.1.1'],
      },
      { blackHole: (name) => name.endsWith('.blackhole.test') },
    );
  });
  afterEach(async () => {
    await dns.close();
  });

  it('returns the A and AAAA answers together, asking both families', async () => {
    await expect(make().resolve('dual.test')).resolves.toEqual(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']);
    expect(dns.queries).toEqual(expect.arrayContaining([{ name: 'dual.test', type: 'A' }, { name: 'dual.test', type: 'AAAA' }]));
    await expect(make().resolve('v6only.test')).resolves.toEqual(['2606:4700:4700::1111']);
    await expect(make().resolve('v4.test')).resolves.toEqual(['93.184.216.34', '93.184.216.35']);
  });

  it('answers [] for NXDOMAIN and for a name with no addresses', async () => {
    await expect(make().resolve('nowhere.test')).resolves.toEqual([]);
    await expect(make().resolve('empty.test')).resolves.toEqual([]);
  });

  it('never asks DNS for an IP literal', async () => {
    const r = make();
    await expect(r.resolve('8.8.8.8')).resolves.toEqual(['8.8.8.8']);
    await expect(r.resolve('[2001:db8::1]')).resolves.toEqual(['2001:db8::1']);
    expect(dns.queries).toEqual([]);
  });

  it('answers from the hosts file before DNS', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-hosts-'));
    const file = path.join(dir, 'hosts');
    fs.writeFileSync(file, '# comment\n127.0.0.1 localhost\n203.0.113.7  Static.Test  alias.test # trailing\n2001:db8::7 static.test\nnot-an-ip bad.test\n');
    try {
      const r = make({ hostsFile: file });
      await expect(r.resolve('static.test')).resolves.toEqual(['203.0.113.7', '2001:db8::7']);
      await expect(r.resolve('ALIAS.test.')).resolves.toEqual(['203.0.113.7']);
      await expect(r.resolve('ok.test')).resolves.toEqual(['1.1.1.1']);
      expect(dns.queriesFor('static.test')).toBe(0);
      expect(dns.queriesFor('bad.test')).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads /etc/hosts by default (localhost without a query)', async () => {
    const addresses = await new SystemDnsResolver({ servers: [dns.address], timeoutMs: 5000 }).resolve('localhost');
    expect(addresses.length).toBeGreaterThan(0);
    for (const a of addresses) expect(['127.0.0.1', '::1']).toContain(a);
    expect(dns.queries).toEqual([]);
  });

  it('gives up on a nameserver that never answers at the timeout, with ETIMEOUT', async () => {
    const t0 = Date.now();
    const err = await make({ timeoutMs: 200 }).resolve('x.blackhole.test').catch((e: unknown) => e);
    const took = Date.now() - t0;
    expect(err).toBeInstanceOf(DnsResolutionError);
    expect(err).toMatchObject({ code: 'ETIMEOUT', host: 'x.blackhole.test', message: 'DNS lookup timed out after 200 ms' });
    expect(took).toBeGreaterThanOrEqual(150);
    expect(took).toBeLessThan(1000);
  });

  it('a nameserver that refuses to listen is a failure, not "no such name"', async () => {
    const closed = await TestDnsServer.start();
    const address = closed.address;
    await closed.close();
    const err = await new SystemDnsResolver({ servers: [address], hostsFile: null, timeoutMs: 300 }).resolve('ok.test').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DnsResolutionError);
  });

  it('dozens of lookups stuck at a black hole do not slow another customer (no thread pool to fill)', async () => {
    const r = make({ timeoutMs: 2500, maxConcurrentPerCustomer: 64 });
    const stuck = Array.from({ length: 40 }, (_, i) => r.resolve(`n${i}.blackhole.test`, { customerId: 'a' }).catch((e: unknown) => e));
    const t0 = Date.now();
    await expect(r.resolve('ok.test', { customerId: 'b' })).resolves.toEqual(['1.1.1.1']);
    expect(Date.now() - t0).toBeLessThan(1000);
    for (const e of await Promise.all(stuck)) expect(e).toMatchObject({ code: 'ETIMEOUT' });
  });

  it('caches answers: a second lookup asks nobody', async () => {
    const r = make();
    await r.resolve('ok.test');
    await r.resolve('OK.test.');
    expect(dns.queriesFor('ok.test')).toBe(2); // one A, one AAAA
  });

  it('caches no longer than the record TTL or the cap, whichever is lower', async () => {
    dns.ttlSeconds = 0;
    const r = make();
    await r.resolve('ok.test');
    await r.resolve('ok.test');
    expect(dns.queriesFor('ok.test')).toBe(4);

    dns.ttlSeconds = 3600;
    const capped = make({ cacheTtlMs: 50 });
    await capped.resolve('v4.test');
    await new Promise((res) => setTimeout(res, 80));
    await capped.resolve('v4.test');
    expect(dns.queriesFor('v4.test')).toBe(4);

    const off = make({ cacheTtlMs: 0 });
    await off.resolve('dual.test');
    await off.resolve('dual.test');
    expect(dns.queriesFor('dual.test')).toBe(4);
  });

  it('caches "no such name" and failures briefly', async () => {
    const r = make({ timeoutMs: 600, negativeTtlMs: 1000 });
    await r.resolve('nowhere.test');
    await r.resolve('nowhere.test');
    expect(dns.queriesFor('nowhere.test')).toBe(2);

    await expect(r.resolve('y.blackhole.test')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    const asked = dns.queriesFor('y.blackhole.test');
    const t0 = Date.now();
    await expect(r.resolve('y.blackhole.test')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    expect(Date.now() - t0).toBeLessThan(300);
    expect(dns.queriesFor('y.blackhole.test')).toBe(asked);

    await new Promise((res) => setTimeout(res, 1050));
    await r.resolve('nowhere.test');
    expect(dns.queriesFor('nowhere.test')).toBe(4);
  });

  it('keeps at most cacheMaxEntries names, dropping the least recently used', async () => {
    const r = make({ cacheMaxEntries: 2 });
    await r.resolve('ok.test');
    await r.resolve('v4.test');
    await r.resolve('ok.test'); // now the most recent
    await r.resolve('dual.test'); // evicts v4.test
    expect(r.cacheSize).toBe(2);
    const before = dns.queries.length;
    await r.resolve('ok.test');
    expect(dns.queries.length).toBe(before);
    await r.resolve('v4.test');
    expect(dns.queries.length).toBe(before + 2);
  });

  it('shares one query between lookups of the same name in flight at once', async () => {
    const r = make();
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => r.resolve('dual.test', { customerId: `c${i}` })));
    for (const a of answers) expect(a).toHaveLength(2);
    expect(dns.queriesFor('dual.test')).toBe(2);
  });

  it('bounds one customer: extra lookups wait, then fail with DnsBusyError; other customers are not bounded by it', async () => {
    const r = make({ timeoutMs: 1000, maxConcurrentPerCustomer: 2 });
    const t0 = Date.now();
    const a = ['a1', 'a2', 'a3'].map((n) => r.resolve(`${n}.blackhole.test`, { customerId: 'a' }).catch((e: unknown) => e));
    await expect(r.resolve('ok.test', { customerId: 'b' })).resolves.toEqual(['1.1.1.1']);
    expect(Date.now() - t0).toBeLessThan(600);
    const [e1, e2, e3] = await Promise.all(a);
    expect([e1, e2]).toEqual([expect.objectContaining({ code: 'ETIMEOUT' }), expect.objectContaining({ code: 'ETIMEOUT' })]);
    // The third waited for a slot until its deadline and never reached the nameserver.
    expect(e3).toBeInstanceOf(DnsBusyError);
    expect(e3).toMatchObject({ code: 'EDNSBUSY', limit: 2, retryAfterSeconds: 1, message: 'too many DNS lookups in progress for this customer (at most 2 at once)' });
    expect(dns.queriesFor('a3.blackhole.test')).toBe(0);
  });

  it('a waiting lookup takes the slot a finished one frees', async () => {
    const r = make({ timeoutMs: 1000, maxConcurrentPerCustomer: 1 });
    const results = await Promise.all([r.resolve('ok.test', { customerId: 'a' }), r.resolve('v4.test', { customerId: 'a' }), r.resolve('dual.test', { customerId: 'a' })]);
    expect(results.map((x) => x.length)).toEqual([1, 2, 2]);
  });

  it('cancels a query at its caller\'s deadline: nothing is sent after the caller gave up', async () => {
    const r = make({ timeoutMs: 1000, maxConcurrentPerCustomer: 1 });
    const first = r.resolve('q0.blackhole.test', { customerId: 'a' }).catch((e: unknown) => e);
    await new Promise((res) => setTimeout(res, 500));
    // Waits for the first's slot, gets it ~500 ms before its own deadline (more than the 250 ms a
    // query needs to be worth starting) and starts a query then.
    const second = r.resolve('q1.blackhole.test', { customerId: 'a' }).catch((e: unknown) => e);
    for (const e of await Promise.all([first, second])) expect(e).toMatchObject({ code: 'ETIMEOUT' });
    expect(dns.queriesFor('q1.blackhole.test')).toBeGreaterThan(0);
    const sent = dns.queries.length;
    // c-ares would retry (every timeout / 3) if the query were still running.
    await new Promise((res) => setTimeout(res, 1000));
    expect(dns.queries.length).toBe(sent);
  });

  it('refuses at once when the waiting room is full, and does not count cache hits', async () => {
    const r = make({ timeoutMs: 1500, maxConcurrentPerCustomer: 1 });
    await r.resolve('ok.test', { customerId: 'a' });
    const held = Array.from({ length: 9 }, (_, i) => r.resolve(`h${i}.blackhole.test`, { customerId: 'a' }).catch((e: unknown) => e));
    const t0 = Date.now();
    await expect(r.resolve('z.blackhole.test', { customerId: 'a' })).rejects.toBeInstanceOf(DnsBusyError);
    await expect(r.resolve('ok.test', { customerId: 'a' })).resolves.toEqual(['1.1.1.1']);
    expect(Date.now() - t0).toBeLessThan(750);
    await Promise.all(held);
  });

  describe('with a gate (a delivery worker\'s per-customer share): never waits', () => {
    /** A DnsShare-like gate of `limit` places, counting what entered it. */
    function gate(limit: number) {
      const g = {
        limit,
        held: 0,
        entered: 0,
        enter: () => {
          if (g.held >= limit) return null;
          g.held++;
          g.entered++;
          let left = false;
          return () => {
            if (!left) g.held--;
            left = true;
          };
        },
      };
      return g;
    }

    it('refuses at once, asking nobody, when the gate is full', async () => {
      const r = make({ timeoutMs: 1500 });
      const g = gate(1);
      const held = r.resolve('g0.blackhole.test', { customerId: 'a', gate: g }).catch((e: unknown) => e);
      const t0 = Date.now();
      const refused = await r.resolve('g1.blackhole.test', { customerId: 'a', gate: g }).catch((e: unknown) => e);
      expect(Date.now() - t0).toBeLessThan(100);
      expect(refused).toBeInstanceOf(DnsBusyError);
      expect(refused).toMatchObject({ code: 'EDNSBUSY', limit: 1, message: 'too many DNS lookups in progress for this customer (at most 1 at once)' });
      expect(dns.queriesFor('g1.blackhole.test')).toBe(0);
      expect(await held).toMatchObject({ code: 'ETIMEOUT' });
      // The place is given back when the lookup ends, a timeout included.
      expect(g.held).toBe(0);
      await expect(r.resolve('ok.test', { customerId: 'a', gate: g })).resolves.toEqual(['1.1.1.1']);
      expect(g.held).toBe(0);
    });

    it('is not entered for cache or hosts-file hits or IP literals', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gate-hosts-'));
      const hostsFile = path.join(dir, 'hosts');
      fs.writeFileSync(hostsFile, '10.1.2.3 listed.test\n');
      const r = make({ hostsFile });
      fs.rmSync(dir, { recursive: true, force: true }); // read once, when built
      const g = gate(1);
      await r.resolve('ok.test', { customerId: 'a', gate: g });
      expect(g.entered).toBe(1);
      const full = gate(0);
      await expect(r.resolve('ok.test', { customerId: 'a', gate: full })).resolves.toEqual(['1.1.1.1']);
      await expect(r.resolve('listed.test', { customerId: 'a', gate: full })).resolves.toEqual(['10.1.2.3']);
      await expect(r.resolve('93.184.216.34', { customerId: 'a', gate: full })).resolves.toEqual(['93.184.216.34']);
      await expect(r.resolve('v4.test', { customerId: 'a', gate: full })).rejects.toBeInstanceOf(DnsBusyError);
      expect(dns.queriesFor('v4.test')).toBe(0);
    });

    it("does not queue behind the customer's lookups at the nameservers either", async () => {
      const r = make({ timeoutMs: 1500, maxConcurrentPerCustomer: 1 });
      const g = gate(4);
      const create = r.resolve('c0.blackhole.test', { customerId: 'a' }).catch((e: unknown) => e);
      const t0 = Date.now();
      await expect(r.resolve('ok.test', { customerId: 'a', gate: g })).rejects.toBeInstanceOf(DnsBusyError);
      expect(Date.now() - t0).toBeLessThan(100);
      expect(g.held).toBe(0);
      // Another customer is not held up.
      await expect(r.resolve('ok.test', { customerId: 'b', gate: g })).resolves.toEqual(['1.1.1.1']);
      await create;
    });

    it('shares one query between lookups of one name, each holding a place while it waits', async () => {
      const r = make({ timeoutMs: 600 });
      const g = gate(3);
      const same = [0, 1].map(() => r.resolve('one.blackhole.test', { customerId: 'a', gate: g }).catch((e: unknown) => e));
      expect(g.held).toBe(2);
      for (const e of await Promise.all(same)) expect(e).toMatchObject({ code: 'ETIMEOUT' });
      // One A and one AAAA query (c-ares may send each twice within the timeout), not one pair per caller.
      expect(dns.queries.filter((q) => q.name === 'one.blackhole.test' && q.type === 'A').length).toBeLessThanOrEqual(2);
      expect(new Set(dns.queries.map((q) => q.name))).toEqual(new Set(['one.blackhole.test']));
      expect(g.held).toBe(0);
    });
  });

  it('rejects nonsensical settings', () => {
    expect(() => make({ timeoutMs: 0 })).toThrow(/dnsTimeoutMs/);
    expect(() => make({ timeoutMs: Number.NaN })).toThrow(/dnsTimeoutMs/);
    expect(() => make({ cacheTtlMs: -1 })).toThrow(/dnsCacheTtlMs/);
    expect(() => make({ negativeTtlMs: Infinity })).toThrow(/dnsNegativeTtlMs/);
    expect(() => make({ cacheMaxEntries: 0 })).toThrow(/dnsCacheMaxEntries/);
    expect(() => make({ maxConcurrentPerCustomer: 1.5 })).toThrow(/dnsMaxConcurrentPerCustomer/);
    expect(() => make({ servers: [] })).toThrow(/at least one nameserver/);
    expect(() => make({ servers: ['dns.example'] })).toThrow(/not a nameserver address/);
  });
});

describe('parseDnsServers', () => {
  it('accepts ip, ip:port, [ipv6] and [ipv6]:port', () => {
    expect(parseDnsServers(['127.0.0.1', ' 127.0.0.1:5353 ', '::1', '[::1]', '[::1]:53'])).toEqual(['127.0.0.1', '127.0.0.1:5353', '::1', '::1', '[::1]:53']);
  });

  it.each(['', 'localhost', '127.0.0.1:0', '127.0.0.1:65536', '127.0.0.1:x', '[::1]:99999', '1.2.3', '[127.0.0.1:53'])('refuses %j', (entry) => {
    expect(() => parseDnsServers([entry])).toThrow(/nameserver address|bad port/);
  });
});

describe('parseHostsFile', () => {
  it('maps every name of a line to its address, skipping comments and garbage', () => {
    const t = parseHostsFile('127.0.0.1\tlocalhost loc.\n::1 localhost ip6-localhost\n# 10.0.0.1 hidden\n\nfe80::1%eth0 zoned\n1.2.3.4 dup dup\n');
    expect(Object.fromEntries(t)).toEqual({
      localhost: ['127.0.0.1', '::1'],
      loc: ['127.0.0.1'],
      'ip6-localhost': ['::1'],
      dup: ['1.2.3.4'],
    });
  });
});

describe('KeyedSemaphore', () => {
  it('grants in order and forgets idle keys', async () => {
    const s = new KeyedSemaphore(1, 2);
    const busy = () => new Error('busy');
    const r1 = await s.acquire('k', Date.now() + 1000, busy);
    const order: number[] = [];
    const p2 = s.acquire('k', Date.now() + 1000, busy).then((r) => (order.push(2), r));
    const p3 = s.acquire('k', Date.now() + 1000, busy).then((r) => (order.push(3), r));
    await expect(s.acquire('k', Date.now() + 1000, busy)).rejects.toThrow('busy');
    expect(s.active('k')).toBe(1);
    r1();
    r1(); // a second release is a no-op
    (await p2)();
    (await p3)();
    expect(order).toEqual([2, 3]);
    expect(s.active('k')).toBe(0);
  });

  it('answers busy to a waiter whose deadline passed before a slot freed, and hands the slot to the next one in time', async () => {
    // A slot freed in the same tick as a waiter's deadline (its timer not yet run) used to be
    // granted to it, which then reached the nameserver with no time left (ETIMEOUT, not busy).
    jest.useFakeTimers({ now: 1_000_000 });
    try {
      const s = new KeyedSemaphore(1, 4);
      const busy = () => new Error('busy');
      const r1 = await s.acquire('k', Date.now() + 1000, busy);
      const late = s.acquire('k', Date.now() + 100, busy);
      const inTime = s.acquire('k', Date.now() + 5000, busy);
      jest.setSystemTime(Date.now() + 200); // the clock moves on; no timer has run yet
      r1();
      await expect(late).rejects.toThrow('busy');
      const r3 = await inTime;
      expect(s.active('k')).toBe(1);
      r3();
      expect(s.active('k')).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('StaticDnsResolver', () => {
  it('answers from its map, case- and trailing-dot-insensitively', async () => {
    const r = new StaticDnsResolver({ 'Hooks.Test.': ['127.0.0.1'] });
    await expect(r.resolve('hooks.test')).resolves.toEqual(['127.0.0.1']);
    await expect(r.resolve('HOOKS.TEST.')).resolves.toEqual(['127.0.0.1']);
    await expect(r.resolve('other.test')).resolves.toEqual([]);
  });

  it('accepts a Map and can be changed (simulated rebinding)', async () => {
    const r = new StaticDnsResolver(new Map([['a.test', ['8.8.8.8']]]));
    r.set('a.test', ['10.0.0.1']).set('b.test', ['1.1.1.1']);
    await expect(r.resolve('a.test')).resolves.toEqual(['10.0.0.1']);
    r.delete('a.test');
    await expect(r.resolve('a.test')).resolves.toEqual([]);
    await expect(r.resolve('b.test')).resolves.toEqual(['1.1.1.1']);
  });

  it('returns copies, so callers cannot mutate the map', async () => {
    const r = new StaticDnsResolver({ 'a.test': ['8.8.8.8'] });
    (await r.resolve('a.test')).push('127.0.0.1');
    await expect(r.resolve('a.test')).resolves.toEqual(['8.8.8.8']);
  });

  it('falls back for unknown names when configured, passing the customer on', async () => {
    const fallback = { resolve: jest.fn(async () => ['9.9.9.9']) };
    const r = new StaticDnsResolver({ 'a.test': ['8.8.8.8'] }, { fallback });
    await expect(r.resolve('a.test')).resolves.toEqual(['8.8.8.8']);
    await expect(r.resolve('b.test', { customerId: 'c1' })).resolves.toEqual(['9.9.9.9']);
    expect(fallback.resolve).toHaveBeenCalledWith('b.test', { customerId: 'c1' });
  });
});
