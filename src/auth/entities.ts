import { ApiKeyEntity } from './api-key.entity';
import { CustomerEntity } from './customer.entity';

/** The tables AuthModule reads and writes; the composition root adds them to the connection. */
export const AUTH_ENTITIES = [CustomerEntity, ApiKeyEntity];
