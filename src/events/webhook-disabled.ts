/**
 * `webhook.disabled`: what the operators are sent (OPERATIONS_WEBHOOK_URL) when trendhooks disables
 * a webhook on its own. Beside the event catalogue, since openapi.json documents its body too.
 */

/** Why trendhooks disabled a webhook by itself (a customer's own pause is `manual` and notifies no one). */
export type AutoDisabledReason = 'gone' | 'failing';

export const WEBHOOK_DISABLED_TYPE = 'webhook.disabled';

/**
 * A webhook that trendhooks disabled on its own: the `data` of a `webhook.disabled` notification
 * (OPERATIONS_WEBHOOK_URL), and what `DeliveryModule.forRoot({ onWebhookDisabled })` is called with.
 */
export interface WebhookDisabledEvent {
  /** The webhook (or host endpoint) id. */
  id: string;
  customer_id: string;
  url: string;
  /** `gone`: its receiver answered 410 Gone; `failing`: every attempt failed for WEBHOOK_DISABLE_AFTER. */
  reason: AutoDisabledReason;
  /** ISO 8601 UTC with milliseconds. */
  disabled_at: string;
}

/** What a host gives `DeliveryModule.forRoot({ onWebhookDisabled })`: called once per webhook disabled automatically; errors are logged, never retried. */
export type OnWebhookDisabled = (event: WebhookDisabledEvent) => void | Promise<void>;

/**
 * The disables of the same webhook that a notification stands for besides the one its `data`
 * reports: the operators hear of a webhook at most once an hour, and what happened in between is
 * folded into the next notification.
 */
export interface FoldedDisables {
  /** How many earlier disables were folded into this notification. */
  count: number;
  /** The first of them (ISO 8601 UTC). */
  first_disabled_at: string;
  /** Of them, how many were `gone` and how many `failing`. */
  gone: number;
  failing: number;
}

/** The notification's body: `{type, timestamp, data}` as every delivery; `data.folded` when earlier disables were folded into it. */
export function webhookDisabledBody(event: WebhookDisabledEvent, folded?: FoldedDisables): string {
  return JSON.stringify({ type: WEBHOOK_DISABLED_TYPE, timestamp: event.disabled_at, data: folded ? { ...event, folded } : event });
}

/** The body's JSON Schema, with an example, for openapi.json's `webhooks`. */
export function webhookDisabledBodySchema(): Record<string, unknown> {
  return {
    type: 'object',
    description: 'A webhook trendhooks disabled on its own, sent to the operators (OPERATIONS_WEBHOOK_URL), never to a customer.',
    required: ['type', 'timestamp', 'data'],
    additionalProperties: false,
    properties: {
      type: { type: 'string', const: WEBHOOK_DISABLED_TYPE },
      timestamp: { type: 'string', format: 'date-time', description: 'When it was disabled.' },
      data: {
        type: 'object',
        required: ['id', 'customer_id', 'url', 'reason', 'disabled_at'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', description: 'The webhook id.' },
          customer_id: { type: 'string', description: 'Its owner.' },
          url: { type: 'string', format: 'uri', description: 'Its destination.' },
          reason: {
            type: 'string',
            enum: ['gone', 'failing'],
            description: '`gone`: the receiver answered 410 Gone; `failing`: every attempt failed for WEBHOOK_DISABLE_AFTER (5 days by default), spread over at least 3 fifths of it.',
          },
          disabled_at: { type: 'string', format: 'date-time' },
          folded: {
            type: 'object',
            description: 'Present when this webhook was disabled more than once since the last notification: at most one is sent per webhook an hour, and the disables in between are folded into the next one, which reports the latest.',
            required: ['count', 'first_disabled_at', 'gone', 'failing'],
            additionalProperties: false,
            properties: {
              count: { type: 'integer', minimum: 1, description: 'Earlier disables folded into this notification.' },
              first_disabled_at: { type: 'string', format: 'date-time', description: 'The first of them.' },
              gone: { type: 'integer', minimum: 0, description: 'Of them, disabled for a 410 Gone.' },
              failing: { type: 'integer', minimum: 0, description: 'Of them, disabled for failing.' },
            },
          },
        },
      },
    },
    example: {
      type: WEBHOOK_DISABLED_TYPE,
      timestamp: '2026-03-08T13:05:00.000Z',
      data: { id: '01KJSX4M8G0000000000000001', customer_id: 'acme', url: 'https://example.com/hooks/trendhooks', reason: 'failing', disabled_at: '2026-03-08T13:05:00.000Z' },
    },
  };
}
