import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { AppError } from '../common/errors';
import { CLOCK, Clock } from '../common/clock';
import { newId } from '../common/ids';
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
export class PortalSessionsService {
  readonly options: ReturnType<typeof resolvePortalOptions>;

  constructor(
    private readonly store: PortalSessionStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() @Inject(PORTAL_OPTIONS) options?: PortalModuleOptions,
  ) {
    this.options = resolvePortalOptions(options);
  }

  /** A link for `principal` (scoped to `webhookId` when given, already checked to be theirs). */
  async mint(principal: Pick<TrendhooksPrincipal, 'tenantId' | 'plan'>, webhookId: string | null, baseUrl: string): Promise<MintedLink> {
    const now = this.clock.now();
    const token = secret(LINK_PREFIX);
    const expires = new Date(now.getTime() + this.options.linkTtlSeconds * 1000);
    // Rows a day past both expiries go as new ones come: the table holds about a day of links.
    await this.store.purge(new Date(now.getTime() - PURGE_AFTER_MS));
    await this.store.insertLink({ id: newId('pses', now.getTime()), tokenHash: hash(token), customerId: principal.tenantId, plan: principal.plan, webhookId, createdAt: now, linkExpiresAt: expires });
    return { url: `${baseUrl.replace(/\/+$/, '')}/portal#token=${token}`, expires_at: expires.toISOString() };
  }

  /** Uses the link `token` up: the new session's secret and grant. Expired, used, unknown or malformed: 401 LINK_EXPIRED. */
  async exchange(token: unknown): Promise<{ session: string; grant: PortalSessionGrant }> {
    if (typeof token !== 'string' || !token.startsWith(LINK_PREFIX) || !SECRET_RE.test(token.slice(LINK_PREFIX.length))) throw new AppError('UNAUTHORIZED', LINK_EXPIRED);
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
