import { Inject, Injectable, Optional } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { AppError } from '../common/errors';
import { CLOCK, Clock } from '../common/clock';
import { newId } from '../common/ids';
import { looksLikeCustomerId } from './customer.entity';
import { PLANS, Plan } from './plans';
import { ApiKeyEntity } from './api-key.entity';
import { displayPrefix, generateApiKey, hashApiKey, isWellFormedApiKey, DISPLAY_PREFIX_LEN } from './api-key.format';
import { ApiKeyStore, KeyOwner } from './api-key.store';
import { AUTH_OPTIONS, AuthModuleOptions } from './auth.options';

/**
 * How long a key looked up in the database is trusted without asking again (AuthModule option
 * `apiKeyCacheTtlMs`): a revocation or plan change made elsewhere (the CLI, another instance)
 * takes effect within this. Revocations and issuance through this service take effect at once.
 */
export const DEFAULT_API_KEY_CACHE_TTL_MS = 2000;
/** Upper bound on the TTL, so a revoked key is always refused within seconds. */
export const MAX_API_KEY_CACHE_TTL_MS = 5000;
/** Keys remembered at most; past it the least recently used goes first. */
export const API_KEY_CACHE_MAX_ENTRIES = 10_000;

/**
 * Known keys (active or revoked) by their SHA-256, for a short while. Unknown keys are never
 * remembered: a key issued by another process works at once, and guessing cannot fill the cache.
 * Times are monotonic (performance.now), not the injectable clock, so a frozen test clock cannot
 * keep an entry alive.
 */
class KeyOwnerCache {
  // lru-cache's TTLs run on performance.now. Not a Map trimmed from its front: deleting a Map's
  // oldest keys leaves holes its iteration skips, microseconds per eviction at 10,000 entries.
  private readonly entries: LRUCache<string, KeyOwner> | null;

  constructor(ttlMs: number, maxEntries: number) {
    this.entries = ttlMs > 0 ? new LRUCache<string, KeyOwner>({ max: maxEntries, ttl: ttlMs, ttlAutopurge: false }) : null;
  }

  get(keyHash: string): KeyOwner | undefined {
    return this.entries?.get(keyHash);
  }

  set(keyHash: string, owner: KeyOwner): void {
    this.entries?.set(keyHash, owner);
  }

  clear(): void {
    this.entries?.clear();
  }
}

export interface Principal {
  customerId: string;
  plan: Plan;
  keyId: string;
}

export interface IssuedKey {
  key: string;
  key_id: string;
  prefix: string;
  customer_id: string;
  customer: string;
  plan: Plan;
  created_customer: boolean;
}

/** What a revocation tells those that hold something the key opened (the portal's sessions). */
export interface RevokedKey {
  keyId: string;
  customerId: string;
}

@Injectable()
export class ApiKeyService {
  private readonly cache: KeyOwnerCache;
  private readonly revokeListeners: Array<(revoked: RevokedKey) => Promise<unknown>> = [];

  constructor(
    private readonly store: ApiKeyStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() @Inject(AUTH_OPTIONS) options: Pick<AuthModuleOptions, 'apiKeyCacheTtlMs'> = {},
  ) {
    const ttl = options.apiKeyCacheTtlMs ?? DEFAULT_API_KEY_CACHE_TTL_MS;
    if (!Number.isFinite(ttl) || ttl < 0 || ttl > MAX_API_KEY_CACHE_TTL_MS) {
      throw new Error(`apiKeyCacheTtlMs must be 0 to ${MAX_API_KEY_CACHE_TTL_MS} ms, got ${ttl}`);
    }
    this.cache = new KeyOwnerCache(ttl, API_KEY_CACHE_MAX_ENTRIES);
  }

  /** Operator issuance: creates the customer when new (or moves it to `plan`), returns the key once. */
  async issue(customerName: string, plan: string): Promise<IssuedKey> {
    const name = customerName.trim();
    if (name === '' || name.length > 200) throw new AppError('VALIDATION_ERROR', 'customer must be 1 to 200 characters');
    // Operator commands take a name or a `cus_` id: a name of the id's form could pass for another customer.
    if (looksLikeCustomerId(name)) throw new AppError('VALIDATION_ERROR', 'customer name must not start with "cus_", the form of customer ids');
    if (!(PLANS as readonly string[]).includes(plan)) {
      throw new AppError('VALIDATION_ERROR', `plan must be one of ${PLANS.join(', ')}`);
    }
    const key = generateApiKey();
    const row: Omit<ApiKeyEntity, 'customerId'> = { id: newId('key'), prefix: displayPrefix(key), keyHash: hashApiKey(key), createdAt: this.clock.now(), revokedAt: null };
    const { customer, created } = await this.store.createKey(name, plan as Plan, row);
    // The customer's plan may have changed: its keys are looked up afresh.
    this.cache.clear();
    return { key, key_id: row.id, prefix: row.prefix, customer_id: customer.id, customer: customer.name, plan: customer.plan, created_customer: created };
  }

  /** Revokes by the display prefix (or the whole key). Returns how many keys were revoked. */
  async revoke(prefixOrKey: string): Promise<number> {
    const value = prefixOrKey.trim();
    if (value.length < DISPLAY_PREFIX_LEN) {
      throw new AppError('VALIDATION_ERROR', `give at least the first ${DISPLAY_PREFIX_LEN} characters of the key`);
    }
    const matches = await this.store.findActive(value.length > DISPLAY_PREFIX_LEN ? { keyHash: hashApiKey(value) } : { prefix: value });
    if (matches.length > 1) throw new AppError('CONFLICT', `prefix ${value} matches ${matches.length} keys; give the whole key`);
    if (matches.length === 0) return 0;
    await this.store.revoke(matches[0].id, this.clock.now());
    this.cache.clear();
    // Awaited: when revoke returns, what the key opened is closed too, in the database every process reads.
    for (const listener of this.revokeListeners) await listener({ keyId: matches[0].id, customerId: matches[0].customerId });
    return 1;
  }

  /**
   * Called after each revocation through this service, before it returns (PortalSessionsService
   * ends the customer's portal sessions and links). Instance-scoped: nothing global.
   */
  onRevoke(listener: (revoked: RevokedKey) => Promise<unknown>): void {
    this.revokeListeners.push(listener);
  }

  /** Whether key `keyId` is still active, asked of the database (not the cache): a check that cannot lag a revocation. */
  isActive(keyId: string): Promise<boolean> {
    return this.store.isActive(keyId);
  }

  /** The customer's name, or null when there is no such customer. */
  async customerName(customerId: string): Promise<string | null> {
    return (await this.store.findCustomerById(customerId))?.name ?? null;
  }

  /** The rate-limit counter of the customer's oldest active key (`key:<id>`), or null when it has none. */
  async budgetOfCustomer(customerId: string): Promise<string | null> {
    const keyId = await this.store.oldestActiveKey(customerId);
    return keyId === null ? null : keyRateLimitKey(keyId);
  }

  /**
   * `Authorization: Bearer <key>` → the caller, or UNAUTHORIZED with nothing about why beyond the shape.
   * Exactly `Bearer`, one space and the key: any other spelling (another case, tabs, extra blanks)
   * may be read differently by a proxy in front, so it is refused rather than guessed at.
   */
  async authenticate(header: string | string[] | undefined): Promise<Principal> {
    if (typeof header !== 'string' || header === '') throw unauthorized('missing Authorization: Bearer <API key> header');
    const m = header.length <= 200 ? /^Bearer ([^\s]+)$/.exec(header) : null;
    if (!m) throw unauthorized('Authorization header must be exactly "Bearer <API key>" (one space, no other blanks)');
    const key = m[1];
    const keyHash = hashApiKey(key);
    let row = this.cache.get(keyHash) ?? null;
    if (!row) {
      // Only well-formed keys are looked up, so only they are ever cached: a hit needs no second
      // checksum (a SHA-256 of its own, per request).
      if (!isWellFormedApiKey(key)) throw unauthorized('API key is malformed');
      row = await this.store.findByHash(keyHash);
      if (row) this.cache.set(keyHash, row);
    }
    if (!row || row.revoked) throw unauthorized('API key is unknown or revoked');
    return { customerId: row.customerId, plan: row.plan, keyId: row.keyId };
  }
}

/** The counter a key's requests are charged to: one budget per key (docs/DECISIONS: rate limit per API key). */
export function keyRateLimitKey(keyId: string): string {
  return `key:${keyId}`;
}

/** 401 UNAUTHORIZED with the challenge every such answer carries. */
export function unauthorized(message: string): AppError {
  return new AppError('UNAUTHORIZED', message, { 'WWW-Authenticate': 'Bearer realm="trendhooks"' });
}
