import { Injectable } from '@nestjs/common';
import { DataSource, In, IsNull, MoreThan, Not } from 'typeorm';
import { InjectTrendhooksDataSource } from '../database/data-source.token';
import { DisabledReason, EndpointEntity } from './endpoint.entity';

/** An endpoint's signing secrets as stored (encrypted). */
export type EndpointSecretValues = Pick<EndpointEntity, 'secret' | 'previousSecret'>;

/** What a page of endpoints shows: never the secrets nor the failure clock. */
export type EndpointView = Omit<EndpointEntity, 'secret' | 'previousSecret' | 'previousSecretExpiresAt' | 'failingSince' | 'failurePeriods' | 'lastFailurePeriod'>;

/** A change of an endpoint, as stored: only the fields given change. */
export interface EndpointPatch {
  url?: string;
  allowNonstandardPort?: boolean;
  /** Disabled (with its time and reason), or resumed (null): resuming also restarts the failure clock. */
  disabled?: { at: Date; reason: DisabledReason } | null;
}

/**
 * The `webhooks` table's store for whoever manages endpoints: the webhook API (each webhook's
 * endpoint), a host's DeliveryEndpoints, the re-encrypt command. The claim, the outcome statements
 * and the lifecycle's failure count keep their own SQL on the same table (all in delivery/). Every
 * call that a tenant's request reaches takes the customer id: another customer's endpoint is never
 * read nor changed through it.
 */
@Injectable()
export class EndpointStore {
  constructor(@InjectTrendhooksDataSource() private readonly ds: DataSource) {}

  private get repo() {
    return this.ds.getRepository(EndpointEntity);
  }

  async insert(row: EndpointEntity): Promise<void> {
    await this.repo.insert(row);
  }

  /** The endpoint, whoever owns it (hosts and operators); null when absent. */
  find(id: string): Promise<EndpointEntity | null> {
    return this.repo.findOneBy({ id });
  }

  findForCustomer(customerId: string, id: string): Promise<EndpointEntity | null> {
    return this.repo.findOneBy({ customerId, id });
  }

  /** The customer's endpoints among `ids` (one query), by id; the others are left out. */
  async viewsForCustomer(customerId: string, ids: readonly string[]): Promise<Map<string, EndpointView>> {
    if (ids.length === 0) return new Map();
    const rows = await this.repo.find({
      select: { id: true, customerId: true, url: true, allowNonstandardPort: true, createdAt: true, lastDeliveryAt: true, lastStatus: true, lastResponseCode: true, disabledAt: true, disabledReason: true },
      where: { customerId, id: In([...ids]) },
    });
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * Applies a change to the customer's endpoint; the row as it is afterwards, or null when it is
   * not the customer's. Statements that each hold on their own, no transaction: on SQLite an async
   * TypeORM transaction would take in the statements other requests run on the shared connection.
   * Disabling keeps an earlier disable's time and reason (a paused endpoint that was already
   * auto-disabled stays `gone`/`failing`).
   */
  async update(customerId: string, id: string, patch: EndpointPatch): Promise<EndpointEntity | null> {
    const set: Partial<EndpointEntity> = {};
    if (patch.url !== undefined) set.url = patch.url;
    if (patch.allowNonstandardPort !== undefined) set.allowNonstandardPort = patch.allowNonstandardPort;
    if (Object.keys(set).length > 0) await this.repo.update({ customerId, id }, set);
    if (patch.disabled === null) await this.resume(id, customerId);
    else if (patch.disabled) await this.disable(id, patch.disabled.at, patch.disabled.reason, customerId);
    return this.repo.findOneBy({ customerId, id });
  }

  /** Marks the endpoint disabled unless it is already; false when absent (or not the customer's) or disabled already. */
  async disable(id: string, at: Date, reason: DisabledReason, customerId?: string): Promise<boolean> {
    const res = await this.repo.update({ id, ...(customerId === undefined ? {} : { customerId }), disabledAt: IsNull() }, { disabledAt: at, disabledReason: reason });
    return (res.affected ?? 0) > 0;
  }

  /** Clears a disable and restarts the failure clock, so an old outage cannot disable it at the first failure. False when absent or not disabled. */
  async resume(id: string, customerId?: string): Promise<boolean> {
    const res = await this.repo.update(
      { id, ...(customerId === undefined ? {} : { customerId }), disabledAt: Not(IsNull()) },
      { disabledAt: null, disabledReason: null, failingSince: null, failurePeriods: 0, lastFailurePeriod: null },
    );
    return (res.affected ?? 0) > 0;
  }

  async updateSecrets(customerId: string, w: Pick<EndpointEntity, 'id' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>): Promise<void> {
    await this.repo.update({ customerId, id: w.id }, { secret: w.secret, previousSecret: w.previousSecret, previousSecretExpiresAt: w.previousSecretExpiresAt });
  }

  /** Deletes the endpoint (only the customer's when `customerId` is given); false when there was none. */
  async remove(id: string, customerId?: string): Promise<boolean> {
    const res = await this.repo.delete({ id, ...(customerId === undefined ? {} : { customerId }) });
    return (res.affected ?? 0) > 0;
  }

  /** Every endpoint after `afterId`, by id, secrets only: the re-encrypt command's walk (operator-only, not tenant-facing). */
  secretsPage(afterId: string, limit: number): Promise<(EndpointSecretValues & Pick<EndpointEntity, 'id'>)[]> {
    return this.repo.find({ select: { id: true, secret: true, previousSecret: true }, where: { id: MoreThan(afterId) }, order: { id: 'ASC' }, take: limit });
  }

  /**
   * Swaps an endpoint's stored secrets only if they are still `before`: a rotation or delete that
   * happened meanwhile wins, and the re-encrypt command simply finds that row current next time.
   */
  async replaceSecrets(id: string, before: EndpointSecretValues, after: EndpointSecretValues): Promise<boolean> {
    const res = await this.repo.update(
      { id, secret: before.secret, previousSecret: before.previousSecret === null ? IsNull() : before.previousSecret },
      { secret: after.secret, previousSecret: after.previousSecret },
    );
    return (res.affected ?? 0) > 0;
  }
}
