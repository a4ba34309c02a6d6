import { ApiKeyEntity } from '../auth/api-key.entity';
import { CustomerEntity } from '../auth/customer.entity';
import { AttemptEntity } from '../delivery/attempt.entity';
import { DeliveryEntity } from '../delivery/delivery.entity';
import { EventEntity } from '../delivery/event.entity';
import { PostEntity } from '../posts/post.entity';
import { TrendSourceEntity } from '../trends/trend-source.entity';
import { WebhookEntity } from '../webhooks/webhook.entity';
import { SettingEntity } from './setting.entity';

/** Every entity trendhooks owns; a host app adds these to its own TypeORM connection. */
export const TRENDHOOKS_ENTITIES = [CustomerEntity, ApiKeyEntity, WebhookEntity, SettingEntity, PostEntity, EventEntity, DeliveryEntity, AttemptEntity, TrendSourceEntity];
