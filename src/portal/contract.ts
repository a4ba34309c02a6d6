import { buildDeliveryBody } from '../delivery/payload';
import { buildDeliveryHeaders } from '../delivery/signer';
import { EVENT_CATALOGUE, EVENT_KINDS, EventKind, exampleFigures } from '../events/catalogue';

/** What a receiver of one kind gets: the catalogue's example, as a delivery would carry it. */
export interface KindContract {
  kind: EventKind;
  summary: string;
  /** The exact request body, built by the delivery layer's own buildDeliveryBody. */
  body: string;
  /** The request's headers for `body`, signed with `EXAMPLE_SECRET` at the example's timestamp. */
  headers: Record<string, string>;
}

/**
 * A secret for the worked example only (never a webhook's): 32 bytes, base64, as every `whsec_`
 * secret. A receiver checks its verification code against it: the signature shown must come out.
 */
export const EXAMPLE_SECRET = `whsec_${Buffer.from('trendhooks-portal-example-secret').toString('base64')}`;
/** The example delivery's id (the `webhook-id` header). */
export const EXAMPLE_DELIVERY_ID = 'msg_01KJSX4M8G0000000000000002';

export const VERIFY_STEPS = [
  'Read the raw request body as bytes, before any JSON parsing.',
  'Signed content: "<webhook-id>.<webhook-timestamp>.<raw body>".',
  'Key: the base64-decoded part of your secret after "whsec_".',
  'HMAC-SHA256 of the signed content with the key, base64: compare it in constant time with each "v1,<base64>" entry of webhook-signature (during a rotation there are two).',
  'Refuse a webhook-timestamp more than 5 minutes from your clock.',
  'Answer 2xx quickly; a retry carries the same webhook-id, so use it to drop duplicates.',
];

/** Each kind's contract: its catalogue example built and signed the way a delivery is (Standard Webhooks v1). */
export function receiverContract(): { kinds: KindContract[]; example_secret: string; verify: string[] } {
  const kinds = EVENT_KINDS.map((kind): KindContract => {
    const def = EVENT_CATALOGUE[kind];
    const ex = def.example.data as unknown as { event_id: string; webhook_id: string; subreddit: string };
    const createdAt = new Date(def.example.timestamp);
    const body = buildDeliveryBody({ id: ex.event_id, type: kind, subreddit: ex.subreddit, createdAt, data: exampleFigures(kind) }, ex.webhook_id);
    return { kind, summary: def.summary, body, headers: buildDeliveryHeaders(EXAMPLE_DELIVERY_ID, Math.floor(createdAt.getTime() / 1000), body, [EXAMPLE_SECRET]) };
  });
  return { kinds, example_secret: EXAMPLE_SECRET, verify: VERIFY_STEPS };
}
