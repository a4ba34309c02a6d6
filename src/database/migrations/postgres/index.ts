import { Initial1795339168757 } from './1795339168757-Initial';
import { Deliveries1795339659788 } from './1795339659788-Deliveries';

/** In order. New files come from `trendhooks migrate --generate Name` (see src/database/README.md). */
export const POSTGRES_MIGRATIONS = [Initial1795339168757, Deliveries1795339659788];
