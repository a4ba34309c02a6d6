import { DynamicModule, Inject, Logger, Module, OnModuleInit } from '@nestjs/common';
import { configuredModule } from '../core/configured-module';
import { DNS_RESOLVER, SystemDnsResolver } from './resolver';
import type { DnsResolver } from './resolver';
import { SsrfPolicy } from './ssrf-policy';
import { SSRF_MODULE_OPTIONS, SSRF_MODULE_OPTIONS_ASYNC_TYPE, SSRF_MODULE_OPTIONS_TYPE, SsrfConfigurableModule } from './ssrf.module-definition';
import type { SsrfModuleOptions } from './ssrf.module-definition';

/** SsrfModule's options (configuredModule). */
@Module({})
class SsrfOptionsModule extends SsrfConfigurableModule {}

/**
 * Destination validation for webhook URLs.
 *
 *   SsrfModule.forRoot({ allowCidrs, denyCidrs, resolver, dnsTimeoutMs, dnsServers, dnsCacheTtlMs,
 *                        dnsNegativeTtlMs, dnsCacheMaxEntries, dnsMaxConcurrentPerCustomer, dnsHostsFile, isGlobal? })
 *   SsrfModule.forRootAsync({ imports, inject, useFactory, isGlobal? })
 *
 * Exports SsrfPolicy and DNS_RESOLVER. Not global (isGlobal: false by default): DeliveryModule and
 * WebhooksModule import it and share one policy on the options the host's forRoot set
 * (configuredModule). It registers no APP_* providers (guards, pipes, ...).
 */
@Module({
  providers: [
    {
      provide: DNS_RESOLVER,
      inject: [SSRF_MODULE_OPTIONS],
      useFactory: (options: SsrfModuleOptions): DnsResolver =>
        options.resolver ??
        new SystemDnsResolver({
          timeoutMs: options.dnsTimeoutMs,
          servers: options.dnsServers,
          cacheTtlMs: options.dnsCacheTtlMs,
          negativeTtlMs: options.dnsNegativeTtlMs,
          cacheMaxEntries: options.dnsCacheMaxEntries,
          maxConcurrentPerCustomer: options.dnsMaxConcurrentPerCustomer,
          hostsFile: options.dnsHostsFile,
        }),
    },
    SsrfPolicy,
  ],
  exports: [SsrfPolicy, DNS_RESOLVER],
})
export class SsrfModule implements OnModuleInit {
  private readonly logger = new Logger(SsrfModule.name);

  constructor(
    @Inject(SSRF_MODULE_OPTIONS) private readonly options: SsrfModuleOptions,
    private readonly policy: SsrfPolicy,
    @Inject(DNS_RESOLVER) private readonly resolver: DnsResolver,
  ) {}

  static forRoot(options: typeof SSRF_MODULE_OPTIONS_TYPE): DynamicModule {
    return configuredModule(SsrfModule, SsrfOptionsModule.forRoot(options), options.isGlobal);
  }

  static forRootAsync(options: typeof SSRF_MODULE_OPTIONS_ASYNC_TYPE): DynamicModule {
    return configuredModule(SsrfModule, SsrfOptionsModule.forRootAsync(options), options.isGlobal);
  }

  onModuleInit(): void {
    // Overrides weaken or tighten the SSRF defence; make them visible in the boot log.
    if (this.policy.allowList.length > 0) {
      this.logger.warn(`SSRF allow list (bypasses the built-in block list): ${this.policy.allowList.map((c) => c.text).join(', ')}`);
    }
    if (this.policy.allowedDestinations.length > 0) {
      this.logger.warn(`SSRF allowed destinations (these receivers only bypass the block list): ${this.policy.allowedDestinations.map((d) => d.text).join(', ')}`);
    }
    if (this.policy.denyList.length > 0) {
      this.logger.log(`SSRF deny list: ${this.policy.denyList.map((c) => c.text).join(', ')}`);
    }
    if (this.options.resolver) {
      this.logger.log(`SSRF DNS resolver: ${this.options.resolver.constructor?.name ?? 'custom'}`);
    } else if (this.resolver instanceof SystemDnsResolver) {
      this.logger.log(`SSRF DNS nameservers: ${this.resolver.servers.join(', ')}`);
    }
  }
}
