import { SettingEntity } from './setting.entity';

/** The tables PaginationModule reads and writes (the generated cursor key); the composition root adds them to the connection. */
export const PAGINATION_ENTITIES = [SettingEntity];
