import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InjectTrendhooksDataSource } from '../database/data-source.token';
import { PortalSessionEntity } from './portal-session.entity';

/** What a live session lets its holder act as. */
export interface PortalSessionGrant {
  id: string;
  customerId: string;
  plan: string;
  webhookId: string | null;
  /** The counter its requests are charged to (the minting key's); null: the tenant's. */
  rateLimitKey: string | null;
  expiresAt: Date;
}

/**
 * `portal_sessions`, its one owner. Every statement is a single one both dialects run alike (no
 * dialect files): the exchange is one conditional UPDATE, so of two uses of one link exactly one
 * wins on either database.
 */
@Injectable()
export class PortalSessionStore {
  constructor(@InjectTrendhooksDataSource() private readonly ds: DataSource) {}

  private get rows() {
    return this.ds.getRepository(PortalSessionEntity);
  }

  async insertLink(row: Pick<PortalSessionEntity, 'id' | 'tokenHash' | 'customerId' | 'plan' | 'webhookId' | 'rateLimitKey' | 'createdAt' | 'linkExpiresAt'>): Promise<void> {
    await this.rows.insert({ ...row, exchangedAt: null, sessionHash: null, sessionExpiresAt: null });
  }

  /**
   * Marks the link `tokenHash` used and binds the session `sessionHash` to it, if the link exists,
   * was never used and has not expired at `now`. Null otherwise (nothing changes then).
   */
  async exchange(tokenHash: string, sessionHash: string, now: Date, sessionExpiresAt: Date): Promise<PortalSessionGrant | null> {
    const result = await this.rows
      .createQueryBuilder()
      .update(PortalSessionEntity)
      .set({ exchangedAt: now, sessionHash, sessionExpiresAt })
      .where('token_hash = :tokenHash AND exchanged_at IS NULL AND link_expires_at > :now', { tokenHash, now: now.getTime() })
      .execute();
    if (!result.affected) return null;
    return this.session(sessionHash, now);
  }

  /** The customer of the unused link `tokenHash`, if it can still be exchanged at `now` (nothing changes). */
  async linkCustomer(tokenHash: string, now: Date): Promise<string | null> {
    const row = await this.rows
      .createQueryBuilder('s')
      .select(['s.id', 's.customerId'])
      .where('s.token_hash = :tokenHash AND s.exchanged_at IS NULL AND s.link_expires_at > :now', { tokenHash, now: now.getTime() })
      .getOne();
    return row?.customerId ?? null;
  }

  /** The session whose cookie hashes to `sessionHash`, if it is live at `now`. */
  async session(sessionHash: string, now: Date): Promise<PortalSessionGrant | null> {
    const row = await this.rows
      .createQueryBuilder('s')
      .where('s.session_hash = :sessionHash AND s.session_expires_at > :now', { sessionHash, now: now.getTime() })
      .getOne();
    if (!row || !row.sessionExpiresAt) return null;
    return { id: row.id, customerId: row.customerId, plan: row.plan, webhookId: row.webhookId, rateLimitKey: row.rateLimitKey, expiresAt: row.sessionExpiresAt };
  }

  /** Ends the live session whose cookie hashes to `sessionHash` at `now` (sign-out); whether there was one. */
  async end(sessionHash: string, now: Date): Promise<boolean> {
    const result = await this.rows
      .createQueryBuilder()
      .update(PortalSessionEntity)
      .set({ sessionExpiresAt: now })
      .where('session_hash = :sessionHash AND session_expires_at > :now', { sessionHash, now: now.getTime() })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /**
   * Ends, at `now`, every live session of `customerId` and every link of its not yet used: the
   * rows themselves change, and every process reads them per request, so it holds at once
   * everywhere. Returns how many sessions and links were ended.
   */
  async endForCustomer(customerId: string, now: Date): Promise<{ sessions: number; links: number }> {
    const at = now.getTime();
    const sessions = await this.rows
      .createQueryBuilder()
      .update(PortalSessionEntity)
      .set({ sessionExpiresAt: now })
      .where('customer_id = :customerId AND session_expires_at > :at', { customerId, at })
      .execute();
    const links = await this.rows
      .createQueryBuilder()
      .update(PortalSessionEntity)
      .set({ linkExpiresAt: now })
      .where('customer_id = :customerId AND exchanged_at IS NULL AND link_expires_at > :at', { customerId, at })
      .execute();
    return { sessions: sessions.affected ?? 0, links: links.affected ?? 0 };
  }

  /** Drops rows past both expiries before `before`; returns how many. */
  async purge(before: Date): Promise<number> {
    const at = before.getTime();
    const unused = await this.rows.createQueryBuilder().delete().from(PortalSessionEntity).where('exchanged_at IS NULL AND link_expires_at < :at', { at }).execute();
    const ended = await this.rows.createQueryBuilder().delete().from(PortalSessionEntity).where('session_expires_at < :at', { at }).execute();
    return (unused.affected ?? 0) + (ended.affected ?? 0);
  }
}
