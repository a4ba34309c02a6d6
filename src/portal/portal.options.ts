import { ConfigurableModuleBuilder, Inject } from '@nestjs/common';
import { globalOptions } from '../core/configured-module';

export interface PortalModuleOptions {
  /**
   * The origin (and path prefix) links point at: `<baseUrl>/portal#token=…`. Without it a link
   * minted over HTTP uses the request's own scheme and Host; the CLI needs it (PORTAL_BASE_URL).
   */
  baseUrl?: string;
  /** How long a link may wait before it is opened (seconds, 60 to 86,400; default 3,600). */
  linkTtlSeconds?: number;
  /** How long the session a link was exchanged for lasts (seconds, 60 to 86,400; default 3,600). */
  sessionTtlSeconds?: number;
  /**
   * Origins allowed to show the page in a frame (CSP `frame-ancestors`, PORTAL_FRAME_ANCESTORS);
   * none by default (`'none'`).
   */
  frameAncestors?: string[];
  /**
   * Link exchanges (`POST /portal/session`) one client address may make per minute (1 to 10,000;
   * default 30), counted in AuthModule's rate-limit store (Redis with REDIS_URL, so shared by replicas).
   */
  exchangesPerMinute?: number;
}

export const { ConfigurableModuleClass: PortalConfigurableModule, MODULE_OPTIONS_TOKEN: PORTAL_OPTIONS, OPTIONS_TYPE: PORTAL_OPTIONS_TYPE, ASYNC_OPTIONS_TYPE: PORTAL_OPTIONS_ASYNC_TYPE } =
  new ConfigurableModuleBuilder<PortalModuleOptions>()
    .setClassMethodName('forRoot')
    // The options only are global (globalOptions); the modules are imported where they are needed.
    .setExtras({ isGlobal: false }, (definition) => globalOptions(definition))
    .build();

export const InjectPortalOptions = (): ParameterDecorator & PropertyDecorator => Inject(PORTAL_OPTIONS);

export const DEFAULT_LINK_TTL_SECONDS = 3600;
export const DEFAULT_SESSION_TTL_SECONDS = 3600;
export const DEFAULT_EXCHANGES_PER_MINUTE = 30;

/** The options with defaults applied, checked (a bad figure fails at boot, not at a first link). */
export function resolvePortalOptions(o: PortalModuleOptions = {}): Required<Omit<PortalModuleOptions, 'baseUrl'>> & { baseUrl: string | null } {
  const ttl = (name: string, v: number | undefined, d: number) => {
    const n = v ?? d;
    if (!Number.isInteger(n) || n < 60 || n > 86_400) throw new Error(`PortalModule ${name} must be an integer from 60 to 86400 seconds, got ${v}`);
    return n;
  };
  let baseUrl: string | null = null;
  if (o.baseUrl !== undefined) {
    const u = new URL(o.baseUrl);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error(`PortalModule baseUrl must be an http(s) URL, got ${o.baseUrl}`);
    baseUrl = o.baseUrl.replace(/\/+$/, '');
  }
  for (const a of o.frameAncestors ?? []) {
    if (!/^(https?:\/\/[A-Za-z0-9.*-]+(:\d+)?|'self')$/.test(a)) throw new Error(`PortalModule frameAncestors: ${JSON.stringify(a)} is not an origin (https://host[:port]) or 'self'`);
  }
  const exchangesPerMinute = o.exchangesPerMinute ?? DEFAULT_EXCHANGES_PER_MINUTE;
  if (!Number.isInteger(exchangesPerMinute) || exchangesPerMinute < 1 || exchangesPerMinute > 10_000) throw new Error(`PortalModule exchangesPerMinute must be an integer from 1 to 10000, got ${o.exchangesPerMinute}`);
  return {
    baseUrl,
    exchangesPerMinute,
    linkTtlSeconds: ttl('linkTtlSeconds', o.linkTtlSeconds, DEFAULT_LINK_TTL_SECONDS),
    sessionTtlSeconds: ttl('sessionTtlSeconds', o.sessionTtlSeconds, DEFAULT_SESSION_TTL_SECONDS),
    frameAncestors: o.frameAncestors ?? [],
  };
}
