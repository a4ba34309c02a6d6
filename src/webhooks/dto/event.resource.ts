import { ApiProperty, ApiSchema } from '../../openapi/swagger';
import { EVENT_KINDS } from '../../events/catalogue';
import { RESERVED_DATA_KEYS } from '../../delivery/payload';
import type { EventRow } from '../../delivery/queue/types';

/** An event of the history, shaped like the body a webhook receives (without `webhook_id`). */
@ApiSchema({ name: 'Event', description: "A trend event of one of the caller's subscriptions." })
export class EventResource {
  @ApiProperty({ description: 'The event id: `data.event_id` of its deliveries.', example: 'evt_01KJSX4M8G0000000000000002' })
  id: string;

  @ApiProperty({ enum: EVENT_KINDS, enumName: 'WebhookEvent' })
  type: string;

  @ApiProperty({ example: 'typescript' })
  subreddit: string;

  @ApiProperty({ format: 'date-time', description: 'When the event happened: the `timestamp` of its delivery bodies.' })
  created_at: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: "The delivery body's `data` without `webhook_id`: `event_id`, `subreddit`, then the event's figures (see the event kind's delivery schema).",
  })
  data: Record<string, unknown>;
}

export function toEventResource(e: EventRow): EventResource {
  const data: Record<string, unknown> = { event_id: e.id, subreddit: e.subreddit };
  const reserved = new Set<string>(RESERVED_DATA_KEYS);
  for (const [key, value] of Object.entries(JSON.parse(e.payload) as Record<string, unknown>)) {
    if (reserved.has(key)) continue;
    if (key === '__proto__') Object.defineProperty(data, key, { value, enumerable: true, writable: true, configurable: true });
    else data[key] = value;
  }
  return { id: e.id, type: e.type, subreddit: e.subreddit, created_at: e.createdAt.toISOString(), data };
}
