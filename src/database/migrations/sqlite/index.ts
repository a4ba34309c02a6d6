import { Initial1795339168006 } from './1795339168006-Initial';
import { Deliveries1795339658698 } from './1795339658698-Deliveries';
import { TrendSources1795341573489 } from './1795341573489-TrendSources';
import { SecretsAtRest1795468933188 } from './1795468933188-SecretsAtRest';

/** In order. New files come from `npm run migrations:generate -- Name` (see src/database/README.md). */
export const SQLITE_MIGRATIONS = [Initial1795339168006, Deliveries1795339658698, TrendSources1795341573489, SecretsAtRest1795468933188];
