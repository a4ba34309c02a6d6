import type { LookupAddress } from 'node:dns';
import { DnsResolutionError, StaticDnsResolver, SystemDnsResolver } from './resolver';

const errno = (code: string) => Object.assign(new Error(code), { code });

describe('SystemDnsResolver', () => {
  it('returns every address from lookup(all: true), deduplicated', async () => {
    const lookup = jest.fn(async (): Promise<LookupAddress[]> => [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
      { address: '93.184.216.34', family: 4 },
    ]);
    const r = new SystemDnsResolver({ lookup });
    await expect(r.resolve('example.com')).resolves.toEqual(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']);
    expect(lookup).toHaveBeenCalledWith('example.com', { all: true, verbatim: true });
  });

  it.each(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_NODATA'])('%s means "no addresses" → []', async (code) => {
    const r = new SystemDnsResolver({ lookup: async () => Promise.reject(errno(code)) });
    await expect(r.resolve('nowhere.example')).resolves.toEqual([]);
  });

  it.each(['EAI_AGAIN', 'ESERVFAIL', 'ECONNREFUSED'])('%s is an unexpected failure → DnsResolutionError', async (code) => {
    const r = new SystemDnsResolver({ lookup: async () => Promise.reject(errno(code)) });
    await expect(r.resolve('x.example')).rejects.toEqual(expect.objectContaining({ name: 'DnsResolutionError', code, message: `DNS lookup failed (${code})` }));
  });

  it('times out', async () => {
    const r = new SystemDnsResolver({ timeoutMs: 20, lookup: () => new Promise(() => undefined) });
    const err = await r.resolve('slow.example').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DnsResolutionError);
    expect(err).toMatchObject({ code: 'ETIMEOUT', host: 'slow.example', message: 'DNS lookup timed out after 20 ms' });
  });

  it('rejects a nonsensical timeout', () => {
    expect(() => new SystemDnsResolver({ timeoutMs: 0 })).toThrow(/dnsTimeoutMs/);
    expect(() => new SystemDnsResolver({ timeoutMs: Number.NaN })).toThrow(/dnsTimeoutMs/);
  });

  it('uses the OS resolver (/etc/hosts) by default', async () => {
    const addresses = await new SystemDnsResolver().resolve('localhost');
    expect(addresses.length).toBeGreaterThan(0);
    for (const a of addresses) expect(['127.0.0.1', '::1']).toContain(a);
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

  it('falls back for unknown names when configured', async () => {
    const fallback = { resolve: jest.fn(async () => ['9.9.9.9']) };
    const r = new StaticDnsResolver({ 'a.test': ['8.8.8.8'] }, { fallback });
    await expect(r.resolve('a.test')).resolves.toEqual(['8.8.8.8']);
    await expect(r.resolve('b.test')).resolves.toEqual(['9.9.9.9']);
    expect(fallback.resolve).toHaveBeenCalledTimes(1);
  });
});
