import { Initial1795339168006 } from './1795339168006-Initial';

/** In order. New files come from `trendhooks migrate --generate Name` (see src/database/README.md). */
export const SQLITE_MIGRATIONS = [Initial1795339168006];
