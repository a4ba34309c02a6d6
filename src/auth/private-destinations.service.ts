import { Injectable, Optional } from '@nestjs/common';
import { AppError } from '../common/errors';
import { parsePrivateGrant, parsePrivateGrants, PrivateGrant } from '../ssrf/ssrf-policy';
import { ApiKeyStore } from './api-key.store';
import { CustomerEntity, looksLikeCustomerId } from './customer.entity';

/**
 * The per-customer private allow-list (operator CLI `trendhooks customers allow-private`): which
 * private destinations one customer's webhooks may reach. Kept on the customer row, read by the
 * SSRF check at create and at every delivery, only when a destination is not public. The rows are
 * ApiKeysModule's: without it (a host's own identity) no tenant has grants, and only SsrfModule's
 * `allowCidrs`/`allowDestinations` open private destinations.
 */
@Injectable()
export class PrivateDestinationsService {
  private readonly store: ApiKeyStore | null;

  constructor(@Optional() store?: ApiKeyStore) {
    this.store = store ?? null;
  }

  private customers(): ApiKeyStore {
    if (!this.store) throw new Error('private destination grants live on the customers table: import ApiKeysModule to manage them');
    return this.store;
  }

  /**
   * A `cus_…` argument is an id and is looked up as an id only; anything else is a name. Looking a
   * `cus_` value up as a name first gave another customer's grants to a customer named like its
   * id (such names are refused at issuance now, but older rows may hold one). NOT_FOUND names
   * what was asked for.
   */
  private async find(customer: string): Promise<CustomerEntity> {
    const store = this.customers();
    if (looksLikeCustomerId(customer)) {
      const row = await store.findCustomerById(customer);
      if (!row) throw new AppError('NOT_FOUND', `no customer with id ${customer}`);
      return row;
    }
    const row = await store.findCustomerByName(customer);
    if (!row) throw new AppError('NOT_FOUND', `no customer named ${customer}`);
    return row;
  }

  async list(customer: string): Promise<{ customer: string; customer_id: string; grants: string[] }> {
    const row = await this.find(customer);
    return { customer: row.name, customer_id: row.id, grants: parsePrivateGrants(row.privateAllow).map((g) => g.text) };
  }

  /** Adds one `CIDR[:PORTS]` grant (a grant for the same CIDR is replaced). */
  async allow(customer: string, grantText: string): Promise<{ customer: string; customer_id: string; grants: string[] }> {
    let grant: PrivateGrant;
    try {
      grant = parsePrivateGrant(grantText);
    } catch (err) {
      throw new AppError('VALIDATION_ERROR', (err as Error).message);
    }
    const row = await this.find(customer);
    const grants = parsePrivateGrants(row.privateAllow).filter((g) => g.cidr.text !== grant.cidr.text);
    grants.push(grant);
    await this.customers().setPrivateAllow(row.id, grants.map((g) => g.text).join(' '));
    return this.list(row.id);
  }

  /** Removes the grant for one CIDR, or every grant with `all`. False when there was none. */
  async revoke(customer: string, cidrText: string): Promise<boolean> {
    const row = await this.find(customer);
    const before = parsePrivateGrants(row.privateAllow);
    let after: PrivateGrant[] = [];
    if (cidrText !== 'all') {
      let cidr: string;
      try {
        cidr = parsePrivateGrant(cidrText).cidr.text;
      } catch (err) {
        throw new AppError('VALIDATION_ERROR', (err as Error).message);
      }
      after = before.filter((g) => g.cidr.text !== cidr);
    }
    if (after.length === before.length) return false;
    await this.customers().setPrivateAllow(row.id, after.length ? after.map((g) => g.text).join(' ') : null);
    return true;
  }

  /** The grants of one customer (a principal's tenant id: at create; a webhook's owner: at every delivery attempt). */
  async forCustomer(customerId: string): Promise<PrivateGrant[]> {
    return this.store ? parsePrivateGrants(await this.store.privateAllowOfCustomer(customerId)) : [];
  }
}
