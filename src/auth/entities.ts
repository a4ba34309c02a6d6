import { ApiKeyEntity } from './api-key.entity';
import { CustomerEntity } from './customer.entity';

/** The tables ApiKeysModule reads and writes; the composition root adds them to the connection (a host without ApiKeysModule may leave them out). */
export const API_KEY_ENTITIES = [CustomerEntity, ApiKeyEntity];

/** @deprecated the same tables as API_KEY_ENTITIES (AuthModule itself has none). */
export const AUTH_ENTITIES = API_KEY_ENTITIES;
