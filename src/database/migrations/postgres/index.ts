import { Initial1795339168757 } from './1795339168757-Initial';
import { Deliveries1795339659788 } from './1795339659788-Deliveries';
import { TrendSources1795341574639 } from './1795341574639-TrendSources';
import { SecretsAtRest1795468935449 } from './1795468935449-SecretsAtRest';

/** In order. New files come from `npm run migrations:generate -- Name` (see src/database/README.md). */
export const POSTGRES_MIGRATIONS = [Initial1795339168757, Deliveries1795339659788, TrendSources1795341574639, SecretsAtRest1795468935449];
