import { Initial1795339168006 } from './1795339168006-Initial';
import { Deliveries1795339658698 } from './1795339658698-Deliveries';
import { TrendSources1795341573489 } from './1795341573489-TrendSources';
import { SecretsAtRest1795468933188 } from './1795468933188-SecretsAtRest';
import { DeliveriesKeyedById1795523787790 } from './1795523787790-DeliveriesKeyedById';
import { DestinationCircuits1795835720133 } from './1795835720133-DestinationCircuits';
import { EventsBySubscription1795857305975 } from './1795857305975-EventsBySubscription';
import { WebhookLifecycle1795857416654 } from './1795857416654-WebhookLifecycle';
import { PortalSessions1795869639619 } from './1795869639619-PortalSessions';
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
import { WebhookSubscriptions1795869825259 } from './1795869825259-WebhookSubscriptions';
import { TrendhooksWebhookSubscriptions1796000000009 } from './1796000000009-TrendhooksWebhookSubscriptions';
import { TrendhooksPortalSessions1796000000010 } from './1796000000010-TrendhooksPortalSessions';
import { PortalSessionBudgets1796665365908 } from './1796665365908-PortalSessionBudgets';
import { TrendhooksPortalSessionBudgets1796000000014 } from './1796000000014-TrendhooksPortalSessionBudgets';

import { OperationsNotifications1796677311764 } from './1796677311764-OperationsNotifications';
import { TrendhooksOperationsNotifications1796000000015 } from './1796000000015-TrendhooksOperationsNotifications';
/** In order. New files come from `npm run migrations:generate -- Name` (see src/database/README.md). */
export const SQLITE_MIGRATIONS = [Initial1795339168006, Deliveries1795339658698, TrendSources1795341573489, SecretsAtRest1795468933188, DeliveriesKeyedById1795523787790, DestinationCircuits1795835720133, EventsBySubscription1795857305975, WebhookLifecycle1795857416654, PortalSessions1795869639619, WebhookSubscriptions1795869825259, TrendSourcesUnreachable1795900000000, PortalSessionBudgets1796665365908, OperationsNotifications1796677311764];

/**
 * The same schema as SQLITE_MIGRATIONS, one series per feature, for a host's own database and
 * migrations table (trendhooksMigrations()). Each builds its feature's tables as they are today;
 * a later entity change adds a class to the feature it touches here AND one to SQLITE_MIGRATIONS.
 */
export const SQLITE_FEATURE_MIGRATIONS = {
  core: [TrendhooksCore1796000000000, TrendhooksDeliveriesKeyedById1796000000004, TrendhooksDestinationCircuits1796000000005, TrendhooksWebhookLifecycle1796000000006, TrendhooksEventsBySubscription1796000000008, TrendhooksWebhookSubscriptions1796000000009, TrendhooksPortalSessions1796000000010, TrendhooksPortalSessionBudgets1796000000014, TrendhooksOperationsNotifications1796000000015],
  apiKeys: [TrendhooksApiKeys1796000000001],
  settings: [TrendhooksSettings1796000000002],
  posts: [TrendhooksPosts1796000000003, TrendhooksTrendSourcesUnreachable1796000000011],
};
