import 'reflect-metadata';
import { DynamicModule, Injectable, Logger, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { DNS_RESOLVER, StaticDnsResolver, SystemDnsResolver } from './resolver';
import { SsrfPolicy } from './ssrf-policy';
import { SsrfModule } from './ssrf.module';
import { SSRF_MODULE_OPTIONS } from './ssrf.module-definition';

describe('SsrfModule', () => {
  afterEach(() => jest.restoreAllMocks());

  it('forRoot provides SsrfPolicy with the given resolver and overrides', async () => {
    const resolver = new StaticDnsResolver({ 'hooks.test': ['127.0.0.1'] });
    const moduleRef = await Test.createTestingModule({
      imports: [SsrfModule.forRoot({ allowCidrs: '127.0.0.1/32', resolver })],
    }).compile();
    const policy = moduleRef.get(SsrfPolicy);
    expect(moduleRef.get(DNS_RESOLVER)).toBe(resolver);
    await expect(policy.checkUrl('https://hooks.test:8443/', { allowNonstandardPort: true })).resolves.toMatchObject({
      host: 'hooks.test',
      addresses: ['127.0.0.1'],
    });
    await moduleRef.close();
  });

  it('defaults to the system resolver', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [SsrfModule.forRoot({ dnsTimeoutMs: 1000 })] }).compile();
    expect(moduleRef.get(DNS_RESOLVER)).toBeInstanceOf(SystemDnsResolver);
    await moduleRef.close();
  });

  it('forRootAsync builds options from injected config', async () => {
    @Injectable()
    class FakeConfig {
      readonly denyCidrs = '8.8.8.0/24';
    }
    @Module({ providers: [FakeConfig], exports: [FakeConfig] })
    class FakeConfigModule {}

    const moduleRef = await Test.createTestingModule({
      imports: [
        SsrfModule.forRootAsync({
          imports: [FakeConfigModule],
          inject: [FakeConfig],
          useFactory: (cfg: FakeConfig) => ({ denyCidrs: cfg.denyCidrs, resolver: new StaticDnsResolver() }),
        }),
      ],
    }).compile();
    const policy = moduleRef.get(SsrfPolicy);
    expect(policy.denyList.map((c) => c.text)).toEqual(['8.8.8.0/24']);
    await expect(policy.checkUrl('https://8.8.8.8/', { allowNonstandardPort: false })).rejects.toMatchObject({
      code: 'WEBHOOK_DESTINATION_BLOCKED',
    });
    await moduleRef.close();
  });

  it('fails at boot on a bad CIDR', async () => {
    await expect(
      Test.createTestingModule({ imports: [SsrfModule.forRoot({ allowCidrs: '10.0.0.1/8' })] }).compile(),
    ).rejects.toThrow(/invalid CIDR "10.0.0.1\/8"/);
  });

  it('logs the allow and deny lists at start when set', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const moduleRef = await Test.createTestingModule({
      imports: [SsrfModule.forRoot({ allowCidrs: '127.0.0.1/32', denyCidrs: '8.8.8.0/24', resolver: new StaticDnsResolver() })],
    }).compile();
    await moduleRef.init();
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('allow list (bypasses the built-in block list): 127.0.0.1/32'));
    expect(log).toHaveBeenCalledWith(expect.stringContaining('deny list: 8.8.8.0/24'));
    await moduleRef.close();
  });

  it('logs nothing about overrides when none are set', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const moduleRef = await Test.createTestingModule({ imports: [SsrfModule.forRoot({})] }).compile();
    await moduleRef.init();
    expect(warn).not.toHaveBeenCalled();
    await moduleRef.close();
  });

  it('registers no global providers and is not global unless the host opts in with isGlobal: true', () => {
    const dyn = SsrfModule.forRoot({});
    const options = dyn.imports?.[0] as DynamicModule;
    const providers = [...(options.providers ?? []), ...((Reflect.getMetadata('providers', SsrfModule) as unknown[]) ?? [])];
    const tokens = providers.map((p) => (typeof p === 'object' && p !== null && 'provide' in p ? p.provide : p));
    for (const global of [APP_GUARD, APP_PIPE, APP_INTERCEPTOR, APP_FILTER]) expect(tokens).not.toContain(global);
    expect(dyn.global).toBe(false);
    // Only the options are global, so every importer of SsrfModule reads the host's.
    expect(options.global).toBe(true);
    expect(options.exports).toEqual([SSRF_MODULE_OPTIONS]);
    expect(SsrfModule.forRoot({ isGlobal: true }).global).toBe(true);
    expect(SsrfModule.forRootAsync({ isGlobal: true, useFactory: () => ({}) }).global).toBe(true);
  });

  it('gives the module that imports SsrfModule by its class the one policy that forRoot configured', async () => {
    @Module({ imports: [SsrfModule] })
    class NeedsPolicy {}
    const resolver = new StaticDnsResolver();
    const moduleRef = await Test.createTestingModule({ imports: [SsrfModule.forRoot({ resolver, denyCidrs: '203.0.113.0/24' }), NeedsPolicy] }).compile();
    expect(moduleRef.select(NeedsPolicy).get(DNS_RESOLVER)).toBe(resolver);
    expect(moduleRef.select(NeedsPolicy).get(SsrfPolicy).denyList.map((c) => c.text)).toEqual(['203.0.113.0/24']);
    await moduleRef.close();
  });

  it('shows SsrfPolicy to a module that does not import SsrfModule only when the host opts in with isGlobal: true', async () => {
    @Injectable()
    class UsesPolicy {
      constructor(readonly policy: SsrfPolicy) {}
    }
    @Module({ providers: [UsesPolicy] })
    class ImportsNothing {}
    const resolver = new StaticDnsResolver();
    await expect(Test.createTestingModule({ imports: [SsrfModule.forRoot({ resolver }), ImportsNothing] }).compile()).rejects.toThrow(/UsesPolicy/);
    const moduleRef = await Test.createTestingModule({ imports: [SsrfModule.forRoot({ resolver, isGlobal: true }), ImportsNothing] }).compile();
    expect(moduleRef.get(UsesPolicy).policy).toBe(moduleRef.get(SsrfPolicy));
    await moduleRef.close();
  });

  it('does not pass isGlobal through to the options', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [SsrfModule.forRoot({ isGlobal: true, resolver: new StaticDnsResolver() })],
    }).compile();
    expect(moduleRef.get(SSRF_MODULE_OPTIONS)).not.toHaveProperty('isGlobal');
    await moduleRef.close();
  });
});
