import { Initial1795339168757 } from './1795339168757-Initial';

/** In order. New files come from `trendhooks migrate --generate Name` (see src/database/README.md). */
export const POSTGRES_MIGRATIONS = [Initial1795339168757];
