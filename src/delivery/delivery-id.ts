import { hash } from 'node:crypto';

/** Crockford base32, lower-case (no i, l, o, u): readable in logs and distinct from upper-case ULIDs. */
const CROCKFORD_LOWER = '0123456789abcdefghjkmnpqrstvwxyz';

/** 26 chars × 5 bits = 130 bits of the digest: collisions are out of reach at any realistic volume. */
export const DELIVERY_ID_LENGTH = 26;
export const DELIVERY_ID_RE = /^msg_[0-9a-hjkmnp-tv-z]{26}$/;

// Domain tag: the hash can never coincide with some other SHA-256 we compute over the same ids.
const DOMAIN = 'trendhooks/delivery-id/v1';

function base32Crockford(bytes: Buffer, chars: number): string {
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const byte of bytes) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < chars) {
      bits -= 5;
      out += CROCKFORD_LOWER[(acc >>> bits) & 31];
    }
    acc &= (1 << bits) - 1; // keep only the unread bits so acc never overflows
    if (out.length >= chars) break;
  }
  return out;
}

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
  return `msg_${base32Crockford(digest, DELIVERY_ID_LENGTH)}`;
}
