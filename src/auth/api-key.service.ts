import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/errors';
import { CLOCK, Clock } from '../common/clock';
import { newId } from '../common/ids';
import { PLANS, Plan } from './plans';
import { ApiKeyEntity } from './api-key.entity';
import { displayPrefix, generateApiKey, hashApiKey, isWellFormedApiKey, DISPLAY_PREFIX_LEN } from './api-key.format';
import { ApiKeyStore } from './api-key.store';

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

@Injectable()
export class ApiKeyService {
  constructor(
    private readonly store: ApiKeyStore,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Operator issuance: creates the customer when new (or moves it to `plan`), returns the key once. */
  async issue(customerName: string, plan: string): Promise<IssuedKey> {
    const name = customerName.trim();
    if (name === '' || name.length > 200) throw new AppError('VALIDATION_ERROR', 'customer must be 1 to 200 characters');
    if (!(PLANS as readonly string[]).includes(plan)) {
      throw new AppError('VALIDATION_ERROR', `plan must be one of ${PLANS.join(', ')}`);
    }
    const key = generateApiKey();
    const row: Omit<ApiKeyEntity, 'customerId'> = { id: newId('key'), prefix: displayPrefix(key), keyHash: hashApiKey(key), createdAt: this.clock.now(), revokedAt: null };
    const { customer, created } = await this.store.createKey(name, plan as Plan, row);
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
    return 1;
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
    if (!isWellFormedApiKey(key)) throw unauthorized('API key is malformed');
    const row = await this.store.findByHash(hashApiKey(key));
    if (!row || row.revoked) throw unauthorized('API key is unknown or revoked');
    return { customerId: row.customerId, plan: row.plan, keyId: row.keyId };
  }
}

/** 401 UNAUTHORIZED with the challenge every such answer carries. */
export function unauthorized(message: string): AppError {
  return new AppError('UNAUTHORIZED', message, { 'WWW-Authenticate': 'Bearer realm="trendhooks"' });
}
