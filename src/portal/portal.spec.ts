import { AppError } from '../common/errors';
import { loadConfig } from '../config/config';
import { portalCookie, portalCookies, portalPathPrefix, portalCsp } from './portal-page.controller';
import { assertPortalRequest, readCookie } from './portal-principal.resolver';
import { resolvePortalOptions } from './portal.options';

describe('portal options', () => {
  it('defaults to an hour each, no base URL and no framing', () => {
    expect(resolvePortalOptions()).toEqual({ baseUrl: null, linkTtlSeconds: 3600, sessionTtlSeconds: 3600, frameAncestors: [], exchangesPerMinute: 30 });
    expect(resolvePortalOptions({ baseUrl: 'https://x.example/tools/' }).baseUrl).toBe('https://x.example/tools');
  });

  it('refuses bad figures at boot', () => {
    expect(() => resolvePortalOptions({ linkTtlSeconds: 59 })).toThrow(/^PORTAL_LINK_TTL_SECONDS \(PortalModule's linkTtlSeconds\) must be an integer from 60 to 86400/);
    expect(() => resolvePortalOptions({ sessionTtlSeconds: 1.5 })).toThrow(/sessionTtlSeconds/);
    expect(() => resolvePortalOptions({ baseUrl: 'ftp://x' })).toThrow(/http\(s\) URL/);
    expect(() => resolvePortalOptions({ frameAncestors: ['*'] })).toThrow(/not an origin/);
    expect(() => resolvePortalOptions({ exchangesPerMinute: 0 })).toThrow(/^PORTAL_EXCHANGES_PER_MINUTE \(PortalModule's exchangesPerMinute\) must be an integer from 1 to 10000/);
  });

  it('reads PORTAL_* from the environment, refusing bad values', () => {
    const env = { CURSOR_SECRET: 'unit-cursor-secret-0123456789abcdefghijklmnop' };
    expect(loadConfig({ ...env, PORTAL_FRAME_ANCESTORS: 'https://a.example, https://b.example:8443' }).portal).toEqual({
      baseUrl: null,
      linkTtlSeconds: 3600,
      sessionTtlSeconds: 3600,
      frameAncestors: ['https://a.example', 'https://b.example:8443'],
      exchangesPerMinute: 30,
    });
    expect(loadConfig({ ...env, PORTAL_EXCHANGES_PER_MINUTE: '5' }).portal.exchangesPerMinute).toBe(5);
    expect(() => loadConfig({ ...env, PORTAL_EXCHANGES_PER_MINUTE: '0' })).toThrow(/PORTAL_EXCHANGES_PER_MINUTE/);
    expect(() => loadConfig({ ...env, PORTAL_BASE_URL: 'https://x.example/?a=1' })).toThrow(/PORTAL_BASE_URL/);
    expect(() => loadConfig({ ...env, PORTAL_LINK_TTL_SECONDS: '10' })).toThrow(/PORTAL_LINK_TTL_SECONDS/);
    expect(() => loadConfig({ ...env, PORTAL_FRAME_ANCESTORS: "https://a.example 'unsafe-inline'" })).toThrow(/PORTAL_FRAME_ANCESTORS/);
  });
});

describe('portal headers', () => {
  it('a strict CSP, framing only by the listed origins', () => {
    expect(portalCsp([])).toMatch(/frame-ancestors 'none'$/);
    expect(portalCsp(['https://a.example'])).toMatch(/frame-ancestors https:\/\/a\.example$/);
    expect(portalCsp([])).not.toMatch(/unsafe|\*/);
  });

  it('a Strict cookie, partitioned SameSite=None only when framed', () => {
    expect(portalCookie('v', 60, false)).toBe('th_portal=v; Path=/v1/webhooks; Max-Age=60; HttpOnly; Secure; SameSite=Strict');
    expect(portalCookie('v', 60, true)).toBe('th_portal=v; Path=/v1/webhooks; Max-Age=60; HttpOnly; Secure; SameSite=None; Partitioned');
  });

  it('the cookie goes to the webhook API and to sign-out only, under the base URL\'s path prefix', () => {
    expect(portalCookies('v', 60, false).map((c) => c.split('; ')[1])).toEqual(['Path=/v1/webhooks', 'Path=/portal/session']);
    expect(portalCookies('v', 60, false, '/tools/th').map((c) => c.split('; ')[1])).toEqual(['Path=/tools/th/v1/webhooks', 'Path=/tools/th/portal/session']);
    expect(portalPathPrefix(null)).toBe('');
    expect(portalPathPrefix('https://x.example')).toBe('');
    expect(portalPathPrefix('https://x.example/tools/th')).toBe('/tools/th');
  });

  it('reads one cookie among several', () => {
    expect(readCookie({ headers: { cookie: 'a=1; th_portal=thps_x; b=2' } }, 'th_portal')).toBe('thps_x');
    expect(readCookie({ headers: { cookie: 'xth_portal=1' } }, 'th_portal')).toBeUndefined();
    expect(readCookie({ headers: {} }, 'th_portal')).toBeUndefined();
  });

  it('a portal request: its header, same-origin fetch metadata, its own Origin', () => {
    const ok = { 'x-trendhooks-portal': '1', host: 'h.example:8080' };
    const code = (headers: Record<string, string>, allowed: string | null = null) => {
      try {
        assertPortalRequest({ headers }, allowed);
        return 'ok';
      } catch (e) {
        return (e as AppError).code;
      }
    };
    expect(code(ok)).toBe('ok');
    expect(code({ ...ok, origin: 'http://h.example:8080', 'sec-fetch-site': 'same-origin' })).toBe('ok');
    expect(code({ ...ok, origin: 'https://portal.example' }, 'https://portal.example')).toBe('ok');
    expect(code({ host: 'h.example:8080' })).toBe('FORBIDDEN');
    expect(code({ ...ok, 'x-trendhooks-portal': '0' })).toBe('FORBIDDEN');
    expect(code({ ...ok, origin: 'http://h.example:8081' })).toBe('FORBIDDEN');
    expect(code({ ...ok, origin: 'null' })).toBe('FORBIDDEN');
    expect(code({ ...ok, 'sec-fetch-site': 'same-site' })).toBe('FORBIDDEN');
    expect(code({ ...ok, 'sec-fetch-site': 'none' })).toBe('FORBIDDEN');
  });
});
