import type { ExecutionContext } from '@nestjs/common';
import { AppError } from '../common/errors';
import type { Plan } from '../auth/plans';
import type { PrincipalResolver, TrendhooksPrincipal } from '../auth/principal';
import type { PortalSessionsService } from './portal-sessions.service';

/** The session cookie: HttpOnly, Secure, SameSite=Strict, sent to the webhook routes only. */
export const PORTAL_COOKIE = 'th_portal';
/** The path the cookie is sent to: the webhook API the page calls (nothing else). */
export const PORTAL_COOKIE_PATH = '/v1/webhooks';
/** Sign-out's path (`DELETE /portal/session`): the cookie's one other destination, so sign-out can name the session. */
export const PORTAL_SIGN_OUT_PATH = '/portal/session';
/**
 * The header every request the page makes carries. A cross-site page cannot send it without a CORS
 * preflight, which trendhooks never grants: with SameSite=Strict and the Origin check, the CSRF defence.
 */
export const PORTAL_HEADER = 'x-trendhooks-portal';

type Req = { headers: Record<string, string | string[] | undefined>; params?: Record<string, string> };

/** The value of cookie `name` in the request's Cookie header(s), if any. */
export function readCookie(req: Req, name: string): string | undefined {
  const raw = req.headers.cookie;
  const all = Array.isArray(raw) ? raw.join('; ') : (raw ?? '');
  for (const part of all.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * A request made by a browser page of another site, or not by the portal page itself: refused.
 * `Sec-Fetch-Site` (sent by every current browser) must be same-origin; an `Origin` must be this
 * server's own (its Host, or `allowedOrigin`, the configured base URL's origin); the portal header
 * must be there.
 */
export function assertPortalRequest(req: Req, allowedOrigin: string | null): void {
  const h = (n: string) => {
    const v = req.headers[n];
    return Array.isArray(v) ? v[0] : v;
  };
  if (h(PORTAL_HEADER) !== '1') throw new AppError('FORBIDDEN', `a portal session is used by the portal page only (header ${PORTAL_HEADER} missing)`);
  const site = h('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') throw new AppError('FORBIDDEN', `cross-site request refused (Sec-Fetch-Site: ${site.slice(0, 40)})`);
  const origin = h('origin');
  if (origin !== undefined) {
    let host: string | null;
    try {
      host = new URL(origin).host;
    } catch {
      host = null;
    }
    const allowed = host !== null && (host === h('host') || (allowedOrigin !== null && origin === allowedOrigin));
    if (!allowed) throw new AppError('FORBIDDEN', `cross-site request refused (Origin ${origin.slice(0, 100)})`);
  }
}

/**
 * `inner`, plus portal sessions: a request with the portal header and no Authorization header is
 * the portal page, acting with its cookie for the tenant that minted its link (PortalSessionsService). Its principal
 * carries `webhookId` for a link scoped to one webhook, which PrincipalGuard enforces on every
 * route. The same routes and rules as an API key: nothing else changes.
 */
export function withPortalSessions(sessions: PortalSessionsService, inner: PrincipalResolver): PrincipalResolver {
  const allowedOrigin = sessions.options.baseUrl ? new URL(sessions.options.baseUrl).origin : null;
  return {
    async resolve(request: Req, context: ExecutionContext): Promise<TrendhooksPrincipal | null | undefined> {
      // Only the portal page's own requests (its header) are portal requests; any other, with or
      // without a leftover portal cookie, is the resolver in force's, e.g. the host's own session.
      if (request.headers.authorization !== undefined || request.headers[PORTAL_HEADER] === undefined) return inner.resolve(request, context);
      assertPortalRequest(request, allowedOrigin);
      const cookie = readCookie(request, PORTAL_COOKIE);
      const grant = cookie === undefined ? null : await sessions.session(cookie);
      if (!grant) throw new AppError('UNAUTHORIZED', 'the portal session has expired; open a new portal link');
      // Charged to the budget of the key that opened it (rateLimitKey), not one of its own.
      return { tenantId: grant.customerId, plan: grant.plan as Plan, rateLimitKey: grant.rateLimitKey ?? undefined, webhookId: grant.webhookId ?? undefined, portalSessionId: grant.id } as TrendhooksPrincipal;
    },
  };
}
