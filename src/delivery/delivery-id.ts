import { hash } from 'node:crypto';
import { crockfordBase32 } from '../common/base32';

/** 26 chars × 5 bits = 130 bits of the digest: collisions are out of reach at any realistic volume. */
export const DELIVERY_ID_LENGTH = 26;
export const DELIVERY_ID_RE = /^msg_[0-9a-hjkmnp-tv-z]{26}$/;

// Domain tag: the hash can never coincide with some other SHA-256 we compute over the same ids.
const DOMAIN = 'trendhooks/delivery-id/v1';

/**
 * The `webhook-id` of the delivery of one event to one webhook: `msg_` + 26 lower-case Crockford
 * base32 chars of SHA-256(domain, event id, webhook id). Derived, not stored-and-random, so it is
 * the same on every retry, after a restart and if the event is fanned out twice — receivers
 * deduplicate on it.
 */
export function deliveryId(eventId: string, webhookId: string): string {
  if (typeof eventId !== 'string' || eventId.length === 0) {
    throw new Error('eventId must be a non-empty string');
  }
  if (typeof webhookId !== 'string' || webhookId.length === 0) {
    throw new Error('webhookId must be a non-empty string');
  }
  // Length-prefix each field (in UTF-8 bytes) so ('ab','c') and ('a','bc') hash differently
  // even if ids ever contain the separator itself. One string, one-shot hash: a fan-out computes
  // thousands of these, and each update() of a Hash object is a trip into C++.
  const digest = hash(
    'sha256',
    `${DOMAIN}\0${Buffer.byteLength(eventId, 'utf8')}:${eventId}\0${Buffer.byteLength(webhookId, 'utf8')}:${webhookId}`,
    'buffer',
  );
  return `msg_${crockfordBase32(digest, DELIVERY_ID_LENGTH)}`;
}
