import { Injectable } from '@nestjs/common';
import { authorizationHeader } from './api-key.guard';
import { ApiKeyService, keyRateLimitKey } from './api-key.service';
import type { PrincipalResolver, TrendhooksPrincipal } from './principal';

/** An API-key caller: the key's customer is the tenant, and each key has its own rate-limit budget. */
export interface ApiKeyPrincipal extends TrendhooksPrincipal {
  rateLimitKey: string;
  keyId: string;
}

/**
 * The default identity: `Authorization: Bearer <API key>` (ApiKeyService.authenticate), the key's
 * customer as tenant. Provided by ApiKeysModule; AuthModule uses it when given no principalResolver.
 */
@Injectable()
export class ApiKeyPrincipalResolver implements PrincipalResolver {
  constructor(private readonly keys: ApiKeyService) {}

  async resolve(request: Parameters<typeof authorizationHeader>[0]): Promise<ApiKeyPrincipal> {
    const p = await this.keys.authenticate(authorizationHeader(request));
    return { tenantId: p.customerId, plan: p.plan, rateLimitKey: keyRateLimitKey(p.keyId), keyId: p.keyId };
  }
}
