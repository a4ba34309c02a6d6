import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AppError } from '../common/errors';
import { CLOCK, Clock } from '../common/clock';
import { newId } from '../common/ids';
import { ApiKeyService } from '../auth/api-key.service';
import type { TrendhooksPrincipal } from '../auth/principal';
import { PORTAL_OPTIONS, PortalModuleOptions, resolvePortalOptions } from './portal.options';
import { PortalSessionGrant, PortalSessionStore } from './portal-session.store';

const LINK_PREFIX = 'thpl_';
const SESSION_PREFIX = 'thps_';
/** 256 random bits, base64url: 43 characters. */
const SECRET_RE = /^[A-Za-z0-9_-]{43}$/;

const hash = (s: string) => createHash('sha256').update(s).digest('hex');
const secret = (prefix: string) => prefix + randomBytes(32).toString('base64url');

/** The one answer to every unusable link, so a caller learns nothing about why. */
export const LINK_EXPIRED = 'this portal link has expired or was already used; ask for a new one';
/** How long a row outlives its expiry (a day): long enough for a support case to tell a used link from a never-issued one, no longer. */
export const PURGE_AFTER_MS = 24 * 3600_000;
export const SESSION_EXPIRED = 'the portal session has expired; open a new portal link';

export interface MintedLink {
  url: string;
  expires_at: string;
}

/**
 * Portal links and sessions. A link is `thpl_` + 256 random bits, handed out once inside the URL's
 * fragment and stored only as its SHA-256; it is exchanged, once and before it expires, for a
 * session (`thps_` + 256 random bits, likewise stored as a hash) that acts as the tenant that
 * minted it (and, for a link scoped to a webhook, that webhook only).
 */
@Injectable()
export class PortalSessionsService implements OnModuleInit {
  readonly options: ReturnType<typeof resolvePortalOptions>;
  private keys?: ApiKeyService;

  constructor(
    private readonly store: PortalSessionStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() @Inject(PORTAL_OPTIONS) options?: PortalModuleOptions,
    private readonly moduleRef?: ModuleRef,
  ) {
    this.options = resolvePortalOptions(options);
  }

  /**
   * With trendhooks' own API keys (ApiKeysModule), a key's revocation ends the portal it opened.
   * Looked up once all is built, not injected: AuthModule's options are made from this service,
   * and ApiKeyService reads them (a cycle Nest would answer with `undefined`).
   */
  onModuleInit(): void {
    try {
      this.keys = this.moduleRef?.get(ApiKeyService, { strict: false });
    } catch {
      this.keys = undefined; // a host without ApiKeysModule: its own identity, no keys to revoke
    }
    this.keys?.onRevoke(({ customerId }) => this.revokeCustomer(customerId));
  }

  /**
   * A link for `principal` (scoped to `webhookId` when given, already checked to be theirs). Its
   * session spends the principal's rate-limit budget; a link the operator mints (no rateLimitKey)
   * that of the customer's oldest active key, so the portal never has a budget of its own.
   */
  async mint(principal: Pick<TrendhooksPrincipal, 'tenantId' | 'plan' | 'rateLimitKey'> & { keyId?: string }, webhookId: string | null, baseUrl: string): Promise<MintedLink> {
    const now = this.clock.now();
    const token = secret(LINK_PREFIX);
    const expires = new Date(now.getTime() + this.options.linkTtlSeconds * 1000);
    // Rows a day past both expiries go as new ones come: the table holds about a day of links.
    await this.store.purge(new Date(now.getTime() - PURGE_AFTER_MS));
    const rateLimitKey = principal.rateLimitKey ?? (await this.keys?.budgetOfCustomer(principal.tenantId)) ?? null;
    await this.store.insertLink({ id: newId('pses', now.getTime()), tokenHash: hash(token), customerId: principal.tenantId, plan: principal.plan, webhookId, rateLimitKey, createdAt: now, linkExpiresAt: expires });
    // The key was accepted from a cache up to seconds old. Asked again now that the link is stored:
    // either the revocation came first (refused here), or its end of the customer's links runs
    // after this insert and ends this link too.
    if (principal.keyId !== undefined && this.keys && !(await this.keys.isActive(principal.keyId))) {
      await this.revokeCustomer(principal.tenantId);
      throw new AppError('UNAUTHORIZED', 'API key is unknown or revoked');
    }
    return { url: `${baseUrl.replace(/\/+$/, '')}/portal#token=${token}`, expires_at: expires.toISOString() };
  }

  /**
   * Ends every portal session and unused link of `customerId` now (`trendhooks portal revoke`, and
   * each revocation of one of its API keys): their cookies and tokens answer 401 from the next
   * request on, in every process (each reads the rows per request).
   */
  revokeCustomer(customerId: string): Promise<{ sessions: number; links: number }> {
    return this.store.endForCustomer(customerId, this.clock.now());
  }

  /** Whether `token` has a link's form (`thpl_` + 43 base64url characters), used or not. */
  isWellFormedLink(token: unknown): token is string {
    return typeof token === 'string' && token.startsWith(LINK_PREFIX) && SECRET_RE.test(token.slice(LINK_PREFIX.length));
  }

  /** The customer the link `token` would open, if it can still be exchanged; null otherwise. Uses nothing up. */
  async linkCustomer(token: unknown): Promise<string | null> {
    return this.isWellFormedLink(token) ? this.store.linkCustomer(hash(token), this.clock.now()) : null;
  }

  /** How the page names a customer: its name when trendhooks' own API keys know it, else null (the id is shown). */
  async customerName(customerId: string): Promise<string | null> {
    return (await this.keys?.customerName(customerId)) ?? null;
  }

  /** Uses the link `token` up: the new session's secret and grant. Expired, used, unknown or malformed: 401 LINK_EXPIRED. */
  async exchange(token: unknown): Promise<{ session: string; grant: PortalSessionGrant }> {
    if (!this.isWellFormedLink(token)) throw new AppError('UNAUTHORIZED', LINK_EXPIRED);
    const now = this.clock.now();
    const session = secret(SESSION_PREFIX);
    const grant = await this.store.exchange(hash(token), hash(session), now, new Date(now.getTime() + this.options.sessionTtlSeconds * 1000));
    if (!grant) throw new AppError('UNAUTHORIZED', LINK_EXPIRED);
    return { session, grant };
  }

  /** Ends the session with this secret (sign-out): its cookie answers 401 from now on. Whether one was live. */
  async end(value: string): Promise<boolean> {
    if (!value.startsWith(SESSION_PREFIX) || !SECRET_RE.test(value.slice(SESSION_PREFIX.length))) return false;
    return this.store.end(hash(value), this.clock.now());
  }

  /** The live session with this secret, or null. */
  async session(value: string): Promise<PortalSessionGrant | null> {
    if (!value.startsWith(SESSION_PREFIX) || !SECRET_RE.test(value.slice(SESSION_PREFIX.length))) return null;
    return this.store.session(hash(value), this.clock.now());
  }
}
