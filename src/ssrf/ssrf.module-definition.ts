import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { DnsResolver } from './resolver';

/** Options of SsrfModule.forRoot / forRootAsync. All settings come in here, never from env. */
export interface SsrfModuleOptions {
  /** Comma/space-separated CIDRs that bypass the built-in block list (see README). */
  allowCidrs?: string;
  /**
   * Comma/space-separated exact receivers, `IPv4:port` or `[IPv6]:port`, that bypass the block list
   * (a local test receiver such as `trendhooks listen`): that address and port only.
   */
  allowDestinations?: string;
  /** Comma/space-separated CIDRs blocked in addition to the built-in list; win over allowCidrs. */
  denyCidrs?: string;
  /** Replaces the system resolver (tests, e2e suites). */
  resolver?: DnsResolver;
  /** Timeout of the system resolver, default 5000 ms. Ignored when `resolver` is given. */
  dnsTimeoutMs?: number;
}

// Kept apart from ssrf.module.ts so SsrfPolicy can inject the token without an import cycle.
export const {
  ConfigurableModuleClass: SsrfConfigurableModule,
  MODULE_OPTIONS_TOKEN: SSRF_MODULE_OPTIONS,
  OPTIONS_TYPE: SSRF_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: SSRF_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<SsrfModuleOptions>()
  .setClassMethodName('forRoot')
  // Global by default so the webhooks and delivery modules share one policy and resolver.
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
