/**
 * A test event: what `POST /v1/webhooks/{webhook_id}/test` sends to that one webhook. It is an
 * event of the webhook's own kind for its own subreddit, with the kind's documented example
 * figures, so a receiver exercises the code path a real trend takes; the delivery layer marks it
 * `data.test: true` (DELIVERED_FIELDS), which every kind's schema documents as optional.
 *
 * What makes an event a test is its id: `evt_test_` + a ULID. The id is on the events row and in
 * every delivery, so the mark needs no column, and the events history and catch-up leave test
 * events out by that prefix (`isTestEventId`, or in SQL `substr(id, 1, 9) <> 'evt_test_'`). No
 * other event may take such an id (`events emit --id` refuses it).
 */

export const TEST_EVENT_ID_PREFIX = 'evt_test_';

/** Whether the event with this id is a test event (its deliveries carry `data.test: true`). */
export function isTestEventId(eventId: string): boolean {
  return eventId.startsWith(TEST_EVENT_ID_PREFIX);
}
