import { Initial1795339168757 } from './1795339168757-Initial';
import { Deliveries1795339659788 } from './1795339659788-Deliveries';
import { TrendSources1795341574639 } from './1795341574639-TrendSources';
import { SecretsAtRest1795468935449 } from './1795468935449-SecretsAtRest';
import { DeliveriesKeyedById1795523787323 } from './1795523787323-DeliveriesKeyedById';
import { DestinationCircuits1795835722315 } from './1795835722315-DestinationCircuits';
import { EventsBySubscription1795857308893 } from './1795857308893-EventsBySubscription';
import { WebhookLifecycle1795857417582 } from './1795857417582-WebhookLifecycle';
import { PortalSessions1795869640250 } from './1795869640250-PortalSessions';
import { TrendSourcesUnreachable1795900000000 } from './1795900000000-TrendSourcesUnreachable';
import { TrendhooksTrendSourcesUnreachable1796000000011 } from './1796000000011-TrendhooksTrendSourcesUnreachable';
import { TrendhooksCore1796000000000 } from './1796000000000-TrendhooksCore';
import { TrendhooksApiKeys1796000000001 } from './1796000000001-TrendhooksApiKeys';
import { TrendhooksSettings1796000000002 } from './1796000000002-TrendhooksSettings';
import { TrendhooksPosts1796000000003 } from './1796000000003-TrendhooksPosts';
import { TrendhooksDeliveriesKeyedById1796000000004 } from './1796000000004-TrendhooksDeliveriesKeyedById';
import { TrendhooksDestinationCircuits1796000000005 } from './1796000000005-TrendhooksDestinationCircuits';
import { TrendhooksWebhookLifecycle1796000000006 } from './1796000000006-TrendhooksWebhookLifecycle';
import { TrendhooksEventsBySubscription1796000000008 } from './1796000000008-TrendhooksEventsBySubscription';
import { WebhookSubscriptions1795869825819 } from './1795869825819-WebhookSubscriptions';
import { TrendhooksWebhookSubscriptions1796000000009 } from './1796000000009-TrendhooksWebhookSubscriptions';
import { TrendhooksPortalSessions1796000000010 } from './1796000000010-TrendhooksPortalSessions';
import { PortalSessionBudgets1796665370697 } from './1796665370697-PortalSessionBudgets';
import { TrendhooksPortalSessionBudgets1796000000014 } from './1796000000014-TrendhooksPortalSessionBudgets';

import { OperationsNotifications1796677315173 } from './1796677315173-OperationsNotifications';
import { TrendhooksOperationsNotifications1796000000015 } from './1796000000015-TrendhooksOperationsNotifications';
/** In order. New files come from `npm run migrations:generate -- Name` (see src/database/README.md). */
export const POSTGRES_MIGRATIONS = [Initial1795339168757, Deliveries1795339659788, TrendSources1795341574639, SecretsAtRest1795468935449, DeliveriesKeyedById1795523787323, DestinationCircuits1795835722315, EventsBySubscription1795857308893, WebhookLifecycle1795857417582, PortalSessions1795869640250, WebhookSubscriptions1795869825819, TrendSourcesUnreachable1795900000000, PortalSessionBudgets1796665370697, OperationsNotifications1796677315173];

/**
 * The same schema as POSTGRES_MIGRATIONS, one series per feature, for a host's own database and
 * migrations table (trendhooksMigrations()). Each builds its feature's tables as they are today;
 * a later entity change adds a class to the feature it touches here AND one to POSTGRES_MIGRATIONS.
 */
export const POSTGRES_FEATURE_MIGRATIONS = {
  core: [TrendhooksCore1796000000000, TrendhooksDeliveriesKeyedById1796000000004, TrendhooksDestinationCircuits1796000000005, TrendhooksWebhookLifecycle1796000000006, TrendhooksEventsBySubscription1796000000008, TrendhooksWebhookSubscriptions1796000000009, TrendhooksPortalSessions1796000000010, TrendhooksPortalSessionBudgets1796000000014, TrendhooksOperationsNotifications1796000000015],
  apiKeys: [TrendhooksApiKeys1796000000001],
  settings: [TrendhooksSettings1796000000002],
  posts: [TrendhooksPosts1796000000003, TrendhooksTrendSourcesUnreachable1796000000011],
};
