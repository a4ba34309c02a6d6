import type { Plan } from './plans';
import type { ApiKeyEntity } from './api-key.entity';
import type { CustomerEntity } from './customer.entity';

export type CustomerRef = Pick<CustomerEntity, 'id' | 'name' | 'plan'>;

/** What authentication needs of a key: whose it is, that customer's plan, and whether it was revoked. */
export interface KeyOwner {
  keyId: string;
  customerId: string;
  plan: Plan;
  revoked: boolean;
}

/**
 * Customers and their API keys (and the customer's private-destination grants, kept on its row).
 * The injection token; the implementation for the database's dialect is chosen in ApiKeysModule.
 */
export abstract class ApiKeyStore {
  /**
   * In one transaction: creates the customer `name` on `plan` when new (or moves it to `plan`) and
   * inserts `key` for it. `created` tells whether the customer is new.
   */
  abstract createKey(name: string, plan: Plan, key: Omit<ApiKeyEntity, 'customerId'>): Promise<{ customer: CustomerRef; created: boolean }>;

  /** The key with this SHA-256 hash, revoked or not; null when there is none. */
  abstract findByHash(keyHash: string): Promise<KeyOwner | null>;

  /** The keys not yet revoked with this display prefix, or this hash. */
  abstract findActive(match: { prefix: string } | { keyHash: string }): Promise<ApiKeyEntity[]>;

  abstract revoke(keyId: string, at: Date): Promise<void>;

  /** Whether key `keyId` exists and is not revoked, read from the database (never a cache). */
  abstract isActive(keyId: string): Promise<boolean>;

  /** The id of the customer's oldest key not revoked, or null when it has none. */
  abstract oldestActiveKey(customerId: string): Promise<string | null>;

  /** Customers holding at least one key not revoked (operator-only: the demo's check for a database in use). */
  abstract countCustomersWithActiveKeys(): Promise<number>;

  abstract findCustomerByName(name: string): Promise<CustomerEntity | null>;

  abstract findCustomerById(id: string): Promise<CustomerEntity | null>;

  /** Replaces the customer's private allow-list (space-separated grants; null for none). */
  abstract setPrivateAllow(customerId: string, privateAllow: string | null): Promise<void>;

  /** The private allow-list of one customer (at webhook create, and at each delivery for the webhook's owner); null when none or no such customer. */
  abstract privateAllowOfCustomer(customerId: string): Promise<string | null>;
}
