/**
 * `webhook.test`: what `POST /v1/webhooks/{webhook_id}/test` sends to that one webhook, whatever
 * kind it subscribes to. Not a trend kind (nothing subscribes to it, no detector fires it), so it is
 * not in EVENT_KINDS; its body is documented beside theirs (OpenAPI `webhooks`) all the same.
 */
import { DeliveredEventFields, field, FieldSpec } from './kind';

export const TEST_EVENT_TYPE = 'webhook.test';

/** A test event's `data` beyond the fields the delivery layer adds. */
export interface TestEventData {
  test: true;
}

export const TEST_EVENT_DATA: TestEventData = Object.freeze({ test: true as const });

export const TEST_EVENT = {
  type: TEST_EVENT_TYPE,
  summary: 'A test event, sent to one webhook on request; it reports no trend.',
  fields: {
    test: { ...field('boolean', 'Always true: this delivery was asked for with POST /v1/webhooks/{webhook_id}/test and reports no trend.'), const: true },
  } satisfies Readonly<Record<keyof TestEventData, FieldSpec>>,
  example: {
    type: TEST_EVENT_TYPE,
    timestamp: '2026-03-03T13:05:00.000Z',
    data: {
      event_id: 'evt_01KJSX4M8G0000000000000002',
      webhook_id: '01KJSX4M8G0000000000000001',
      subreddit: 'demo',
      test: true,
    } satisfies TestEventData & DeliveredEventFields,
  },
} as const;
