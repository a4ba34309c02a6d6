import { ConfigurableModuleBuilder, Inject } from '@nestjs/common';
import { INT_SETTINGS, checkFrameAncestor, checkIntOption, checkOption, checkPortalBaseUrl } from '../config/settings';
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
    .setExtras({ isGlobal: false }, (definition) => globalOptions(definition, resolvePortalOptions))
    .build();

export const InjectPortalOptions = (): ParameterDecorator & PropertyDecorator => Inject(PORTAL_OPTIONS);

export const DEFAULT_LINK_TTL_SECONDS = 3600;
export const DEFAULT_SESSION_TTL_SECONDS = 3600;
export const DEFAULT_EXCHANGES_PER_MINUTE = 30;

/**
 * The options with defaults applied, checked at start (forRoot / forRootAsync) by the standalone's
 * checks of the same PORTAL_* settings: a bad figure stops the start naming it, not a first link.
 */
export function resolvePortalOptions(o: PortalModuleOptions = {}): Required<Omit<PortalModuleOptions, 'baseUrl'>> & { baseUrl: string | null } {
  const what = (option: string) => `PortalModule's ${option}`;
  checkOption('PORTAL_BASE_URL', what('baseUrl'), o.baseUrl, checkPortalBaseUrl);
  for (const a of o.frameAncestors ?? []) checkOption('PORTAL_FRAME_ANCESTORS', what('frameAncestors'), a, checkFrameAncestor);
  checkIntOption(INT_SETTINGS.portalLinkTtlSeconds, o.linkTtlSeconds, what('linkTtlSeconds'));
  checkIntOption(INT_SETTINGS.portalSessionTtlSeconds, o.sessionTtlSeconds, what('sessionTtlSeconds'));
  checkIntOption(INT_SETTINGS.portalExchangesPerMinute, o.exchangesPerMinute, what('exchangesPerMinute'));
  return {
    baseUrl: o.baseUrl === undefined ? null : o.baseUrl.replace(/\/+$/, ''),
    exchangesPerMinute: o.exchangesPerMinute ?? DEFAULT_EXCHANGES_PER_MINUTE,
    linkTtlSeconds: o.linkTtlSeconds ?? DEFAULT_LINK_TTL_SECONDS,
    sessionTtlSeconds: o.sessionTtlSeconds ?? DEFAULT_SESSION_TTL_SECONDS,
    frameAncestors: o.frameAncestors ?? [],
  };
}
