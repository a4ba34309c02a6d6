import * as fs from 'node:fs';
import * as path from 'node:path';
import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post, Req, Res, StreamableFile, UseFilters, UseGuards } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppError } from '../common/errors';
import { BodyErrorGuard, envelope, RequestId } from '../common/envelope';
import { ApiExceptionFilter } from '../common/exception.filter';
import { ApiExcludeController } from '../openapi/swagger';
import { RateLimitService } from '../auth/rate-limit.service';
import { receiverContract } from './contract';
import { assertPortalRequest, PORTAL_COOKIE, PORTAL_COOKIE_PATH, PORTAL_SIGN_OUT_PATH, readCookie } from './portal-principal.resolver';
import { PortalSessionsService, SESSION_EXPIRED } from './portal-sessions.service';

/** The page's compiled script and stylesheet: dist/portal/page (built by `npm run build`), also when this file runs from src/ (tests). */
export function portalAssetsDir(): string {
  const candidates = [path.join(__dirname, 'page'), path.resolve(__dirname, '../../dist/portal/page')];
  return candidates.find((d) => fs.existsSync(path.join(d, 'portal.js'))) ?? candidates[0];
}

const ASSETS: Record<string, string> = {
  'portal.js': 'application/javascript; charset=utf-8',
  'portal.css': 'text/css; charset=utf-8',
};

/** No inline script or style, nothing from another origin; framing per PORTAL_FRAME_ANCESTORS. */
export function portalCsp(frameAncestors: readonly string[]): string {
  const ancestors = frameAncestors.length > 0 ? frameAncestors.join(' ') : "'none'";
  return `default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors ${ancestors}`;
}

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="referrer" content="no-referrer">
  <title>Webhooks · trendhooks portal</title>
  <link rel="stylesheet" href="portal/assets/portal.css">
</head>
<body>
  <header><h1>Your webhooks</h1><p id="whose"></p><p id="scope" class="muted"></p></header>
  <main id="app" aria-live="polite"><p>Loading…</p></main>
  <script src="portal/assets/portal.js"></script>
</body>
</html>
`;

type Res = object;

/** How much larger the budget of well-formed link tokens is than that of refused ones, per address. */
export const WELL_FORMED_BUDGET_FACTOR = 100;

/**
 * The session cookie. SameSite=Strict, unless the page may be framed by other sites
 * (PORTAL_FRAME_ANCESTORS): a browser withholds a Strict cookie from a page framed cross-site, so
 * there it is `SameSite=None; Partitioned` (kept per top-level site, CHIPS). The portal header and
 * the Origin / Sec-Fetch-Site checks stay the CSRF defence either way.
 */
export function portalCookie(value: string, maxAgeSeconds: number, framed: boolean, cookiePath: string = PORTAL_COOKIE_PATH): string {
  return `${PORTAL_COOKIE}=${value}; Path=${cookiePath}; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; ${framed ? 'SameSite=None; Partitioned' : 'SameSite=Strict'}`;
}

/**
 * The session's cookies: the one the webhook API reads (Path=/v1/webhooks) and the same value on
 * `DELETE /portal/session` only, so that sign-out can name the session it ends. A browser sends
 * neither anywhere else.
 */
export function portalCookies(value: string, maxAgeSeconds: number, framed: boolean, prefix = ''): string[] {
  return [portalCookie(value, maxAgeSeconds, framed, prefix + PORTAL_COOKIE_PATH), portalCookie(value, maxAgeSeconds, framed, prefix + PORTAL_SIGN_OUT_PATH)];
}

/**
 * The path the browser sees before trendhooks' own routes: PORTAL_BASE_URL's path (`/tools/th` of
 * `https://x.example/tools/th`), for a server behind a proxy that mounts it there. The page calls
 * the API by relative paths, so only the cookie's Path needs it.
 */
export function portalPathPrefix(baseUrl: string | null): string {
  return baseUrl === null ? '' : new URL(baseUrl).pathname.replace(/\/+$/, '');
}

type PortalReq = { headers: Record<string, string | undefined>; query?: Record<string, unknown>; ip?: string; socket?: { remoteAddress?: string } };

/** `GET /portal` (the page), its assets, and `POST /portal/session` (a link's token → the session cookie). */
@ApiExcludeController()
@Controller('portal')
@UseFilters(ApiExceptionFilter)
export class PortalPageController {
  private readonly csp: string;

  private readonly contract = receiverContract();
  private readonly allowedOrigin: string | null;
  private readonly prefix: string;

  constructor(
    private readonly sessions: PortalSessionsService,
    private readonly adapterHost: HttpAdapterHost,
    private readonly limits: RateLimitService,
  ) {
    this.csp = portalCsp(sessions.options.frameAncestors);
    this.allowedOrigin = sessions.options.baseUrl ? new URL(sessions.options.baseUrl).origin : null;
    this.prefix = portalPathPrefix(sessions.options.baseUrl);
  }

  private headers(res: Res, extra: Record<string, string> = {}): void {
    const all: Record<string, string> = {
      'Content-Security-Policy': this.csp,
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
      ...(this.sessions.options.frameAncestors.length === 0 ? { 'X-Frame-Options': 'DENY' } : {}),
      ...extra,
    };
    for (const [k, v] of Object.entries(all)) this.adapterHost.httpAdapter.setHeader(res, k, v);
  }

  /** Several Set-Cookie headers: express (res.set) and fastify (reply.header) both take an array for it. */
  private setCookies(res: Res, cookies: string[]): void {
    this.adapterHost.httpAdapter.setHeader(res, 'Set-Cookie', cookies as unknown as string);
  }

  @Get()
  page(@Res({ passthrough: true }) res: Res): StreamableFile {
    this.headers(res);
    return new StreamableFile(Buffer.from(PAGE), { type: 'text/html; charset=utf-8' });
  }

  @Get('assets/:name')
  asset(@Param('name') name: string, @Res({ passthrough: true }) res: Res): StreamableFile {
    if (!Object.hasOwn(ASSETS, name)) throw new AppError('NOT_FOUND', `no portal asset ${name.slice(0, 60)}`);
    const file = path.join(portalAssetsDir(), name);
    if (!fs.existsSync(file)) throw new AppError('NOT_FOUND', `portal asset ${name} is not built (npm run build)`);
    this.headers(res, { 'Cache-Control': 'no-cache' });
    return new StreamableFile(fs.readFileSync(file), { type: ASSETS[name] });
  }

  /**
   * The receiver's contract per event kind: each kind's catalogue example built as a delivery body
   * is (buildDeliveryBody), its signed headers, and how to verify them. Public and the same for
   * everyone (it holds nothing of a customer's); the page reads it from here, its own origin.
   */
  @Get('contract')
  contractOf(@Res({ passthrough: true }) res: Res, @RequestId() requestId: string) {
    this.headers(res, { 'Cache-Control': 'no-cache' });
    return envelope(requestId, this.contract);
  }

  /**
   * Exchanges a link's token (in the body, never a query string) for the session cookie. Same
   * origin only, with the portal header: another site cannot log a browser into a session.
   */
  @Post('session')
  @HttpCode(200)
  @UseGuards(BodyErrorGuard)
  @Header('Cache-Control', 'no-store')
  async exchange(@Req() req: PortalReq, @Body() body: unknown, @Res({ passthrough: true }) res: Res, @RequestId() requestId: string) {
    const token = typeof body === 'object' && body !== null ? (body as { token?: unknown }).token : undefined;
    const address = `ip:${req.ip ?? req.socket?.remoteAddress ?? 'unknown'}`;
    // Refused tokens are counted per address (a few a minute: a client tries links, not a
    // dictionary). A well-formed token is tried against a separate budget a hundred times larger:
    // garbage from one client behind a shared proxy cannot lock everyone else out of the portal,
    // and guessing a 256-bit token is hopeless at any rate.
    const wellFormed = this.sessions.isWellFormedLink(token);
    const refusedKey = `portal-exchange:${address}`;
    const state = wellFormed
      ? await this.limits.consume(`portal-exchange:well-formed:${address}`, this.sessions.options.exchangesPerMinute * WELL_FORMED_BUDGET_FACTOR)
      : await this.limits.consume(refusedKey, this.sessions.options.exchangesPerMinute);
    for (const [k, v] of Object.entries(RateLimitService.headers(state))) this.adapterHost.httpAdapter.setHeader(res, k, v);
    if (!state.allowed) throw RateLimitService.rejection(state);
    assertPortalRequest(req, this.allowedOrigin);
    if (req.query && Object.keys(req.query).length > 0) throw new AppError('BAD_REQUEST', 'the token goes in the JSON body, never in the query string');
    await this.refuseSilentSwitch(req, body, token);
    let exchanged: Awaited<ReturnType<PortalSessionsService['exchange']>>;
    try {
      exchanged = await this.sessions.exchange(token);
    } catch (err) {
      // A well-formed token refused (used, expired, unknown) counts against its address too.
      if (wellFormed && err instanceof AppError && err.code === 'UNAUTHORIZED') await this.limits.consume(refusedKey, this.sessions.options.exchangesPerMinute);
      throw err;
    }
    const { session, grant } = exchanged;
    // The session it replaces (the cookie this browser sent) ends: one browser, one portal.
    const previous = readCookie(req, PORTAL_COOKIE);
    if (previous !== undefined) await this.sessions.end(previous);
    this.setCookies(res, portalCookies(session, this.sessions.options.sessionTtlSeconds, this.sessions.options.frameAncestors.length > 0, this.prefix));
    return envelope(requestId, { ...(await this.whose(grant.customerId)), expires_at: grant.expiresAt.toISOString(), webhook_id: grant.webhookId });
  }

  /**
   * A link of another customer than the live session this browser holds replaces it only when the
   * body says `replace: true` (the page asks first): a link planted in a page cannot silently walk
   * a signed-in customer into someone else's portal. 409 CONFLICT names both; nothing is used up.
   */
  private async refuseSilentSwitch(req: PortalReq, body: unknown, token: unknown): Promise<void> {
    const replace = typeof body === 'object' && body !== null ? (body as { replace?: unknown }).replace : undefined;
    if (replace !== undefined && typeof replace !== 'boolean') throw new AppError('VALIDATION_ERROR', 'replace must be a boolean');
    const cookie = readCookie(req, PORTAL_COOKIE);
    if (replace === true || cookie === undefined) return;
    const current = await this.sessions.session(cookie);
    const next = current ? await this.sessions.linkCustomer(token) : null;
    if (!current || next === null || next === current.customerId) return;
    const [a, b] = [await this.whose(current.customerId), await this.whose(next)];
    const label = (w: { customer_id: string; customer_name: string | null }) => (w.customer_name ? `${w.customer_name} (${w.customer_id})` : w.customer_id);
    throw new AppError('CONFLICT', `this browser is signed in to the portal of ${label(a)}; the link opens the portal of ${label(b)}. Send replace: true to switch`);
  }

  /** The customer a session belongs to, as the page shows it. */
  private async whose(customerId: string): Promise<{ customer_id: string; customer_name: string | null }> {
    return { customer_id: customerId, customer_name: await this.sessions.customerName(customerId) };
  }

  /** Which customer's portal this browser's session is (the page's header), or 401 without a live one. */
  @Get('session')
  @Header('Cache-Control', 'no-store')
  async current(@Req() req: PortalReq, @RequestId() requestId: string) {
    assertPortalRequest(req, this.allowedOrigin);
    const cookie = readCookie(req, PORTAL_COOKIE);
    const grant = cookie === undefined ? null : await this.sessions.session(cookie);
    if (!grant) throw new AppError('UNAUTHORIZED', SESSION_EXPIRED);
    return envelope(requestId, { ...(await this.whose(grant.customerId)), expires_at: grant.expiresAt.toISOString(), webhook_id: grant.webhookId });
  }

  /**
   * Sign-out: ends the session named by the cookie (server side: the cookie answers 401 from then
   * on, wherever it was copied) and clears both cookies. From the portal page only (header, Origin,
   * Sec-Fetch-Site), as every portal request. 204 also when no live session came with it.
   */
  @Delete('session')
  @HttpCode(204)
  @Header('Cache-Control', 'no-store')
  async signOut(@Req() req: PortalReq, @Res({ passthrough: true }) res: Res): Promise<void> {
    assertPortalRequest(req, this.allowedOrigin);
    const cookie = readCookie(req, PORTAL_COOKIE);
    if (cookie !== undefined) await this.sessions.end(cookie);
    this.setCookies(res, portalCookies('', 0, this.sessions.options.frameAncestors.length > 0, this.prefix));
  }
}
