import { ConfigurableModuleBuilder, Inject } from '@nestjs/common';
import { INT_SETTINGS, checkIntOption, checkOption } from '../config/settings';
import { globalOptions } from '../core/configured-module';
import { parseCidrList } from './cidr';
import { parseAllowDestinations } from './destinations';
import { parseDnsServers, type DnsResolver } from './resolver';

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
  /** The settings below configure the built-in resolver; all are ignored when `resolver` is given. */
  /** Timeout of one lookup (waiting for a slot included), default 5000 ms. */
  dnsTimeoutMs?: number;
  /** Nameservers (`ip`, `ip:port`, `[ipv6]:port`); default the system's. */
  dnsServers?: readonly string[];
  /** Cap on how long an answer is cached (the record TTL when lower), default 60 000 ms; 0: no cache. */
  dnsCacheTtlMs?: number;
  /** How long no-such-name and failed lookups are cached, default 5000 ms; 0: not at all. */
  dnsNegativeTtlMs?: number;
  /** Most names cached, default 10 000. */
  dnsCacheMaxEntries?: number;
  /** Most DNS lookups one customer has in flight at once, default 8. */
  dnsMaxConcurrentPerCustomer?: number;
  /** Hosts file answered before DNS, default /etc/hosts; null: none. */
  dnsHostsFile?: string | null;
}

// Kept apart from ssrf.module.ts so SsrfPolicy can inject the token without an import cycle.
export const {
  ConfigurableModuleClass: SsrfConfigurableModule,
  MODULE_OPTIONS_TOKEN: SSRF_MODULE_OPTIONS,
  OPTIONS_TYPE: SSRF_MODULE_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: SSRF_MODULE_OPTIONS_ASYNC_TYPE,
} = new ConfigurableModuleBuilder<SsrfModuleOptions>()
  .setClassMethodName('forRoot')
  // The options only are global (globalOptions); the module is imported where it is needed.
  .setExtras({ isGlobal: false }, (definition) => globalOptions(definition, checkSsrfOptions))
  .build();

/** `@InjectSsrfOptions() options: SsrfModuleOptions`: what forRoot / forRootAsync was given. */
export const InjectSsrfOptions = (): ParameterDecorator & PropertyDecorator => Inject(SSRF_MODULE_OPTIONS);

/** SsrfModule's options, checked at start by the standalone's checks of the same settings (SSRF_*). */
export function checkSsrfOptions(o: SsrfModuleOptions): void {
  const what = (option: string) => `SsrfModule's ${option}`;
  checkOption('SSRF_ALLOW_CIDRS', what('allowCidrs'), o.allowCidrs, parseCidrList);
  checkOption('SSRF_DENY_CIDRS', what('denyCidrs'), o.denyCidrs, parseCidrList);
  checkOption('SSRF_ALLOW_DESTINATIONS', what('allowDestinations'), o.allowDestinations, parseAllowDestinations);
  checkOption('SSRF_DNS_SERVERS', what('dnsServers'), o.dnsServers, (servers) => parseDnsServers(servers));
  const s = INT_SETTINGS;
  checkIntOption(s.ssrfDnsTimeoutMs, o.dnsTimeoutMs, what('dnsTimeoutMs'));
  checkIntOption(s.ssrfDnsCacheTtlMs, o.dnsCacheTtlMs, what('dnsCacheTtlMs'));
  checkIntOption(s.ssrfDnsNegativeTtlMs, o.dnsNegativeTtlMs, what('dnsNegativeTtlMs'));
  checkIntOption(s.ssrfDnsCacheMaxEntries, o.dnsCacheMaxEntries, what('dnsCacheMaxEntries'));
  checkIntOption(s.ssrfDnsMaxConcurrentPerCustomer, o.dnsMaxConcurrentPerCustomer, what('dnsMaxConcurrentPerCustomer'));
}
