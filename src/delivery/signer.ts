import { createHmac } from 'node:crypto';
import { TwoGenerationCache } from '../common/two-generation-cache';
import { decodeWebhookSecret } from './secret';

export const DELIVERY_USER_AGENT = 'trendhooks-webhooks/1';

/**
 * Decoded keys by secret text. Decoding + validating base64 on every attempt is wasted work on
 * the hot path; the bound keeps memory flat however many webhooks the process ever signs for.
 * Two generations, not an LRU: a fan-out to more webhooks than the bound misses on every
 * delivery, and there an LRU's miss, insert and eviction (about 1 µs) cost more than the decode
 * they were meant to save (0.5–0.9 µs).
 */
const keyCache = new TwoGenerationCache<string, Buffer>(1024);

function hmacKey(secret: string): Buffer {
  let key = keyCache.get(secret);
  if (key === undefined) {
    key = decodeWebhookSecret(secret); // throws before caching, so bad secrets never stick
    keyCache.set(secret, key);
  }
  return key;
}

export interface SignInput {
  /** The `webhook-id` header value (the delivery id). */
  msgId: string;
  /** Unix seconds of this attempt; receivers reject values more than 5 min off their clock. */
  timestamp: number;
  /** The exact bytes sent as the request body. */
  body: string;
  /** The current secret, plus the previous one while a rotation's 24 h overlap lasts. */
  secrets: string[];
}

/**
 * The `webhook-signature` header value: `v1,<base64 HMAC-SHA256("id.timestamp.body")>` per
 * secret, space-separated, so receivers holding either secret during a rotation verify.
 */
export function signPayload(input: SignInput): string {
  const { msgId, timestamp, body, secrets } = input;
  if (typeof msgId !== 'string' || msgId.length === 0) {
    throw new Error('msgId must be a non-empty string');
  }
  // Receivers parseInt the header: a fraction or negative number would sign something else.
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new Error('timestamp must be a non-negative integer of unix seconds');
  }
  if (!Array.isArray(secrets) || secrets.length < 1 || secrets.length > 2) {
    throw new Error('signPayload needs 1 or 2 secrets');
  }
  const prefix = `${msgId}.${timestamp}.`;
  const signatures: string[] = [];
  for (const secret of new Set(secrets)) {
    // Two update() calls avoid concatenating a copy of a possibly large body.
    const mac = createHmac('sha256', hmacKey(secret)).update(prefix, 'utf8').update(body, 'utf8');
    signatures.push(`v1,${mac.digest('base64')}`);
  }
  return signatures.join(' ');
}

/** Every header a delivery attempt sends (names lower-case, as undici and HTTP/2 expect). */
export function buildDeliveryHeaders(
  msgId: string,
  timestamp: number,
  body: string,
  secrets: string[],
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': DELIVERY_USER_AGENT,
    'webhook-id': msgId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signPayload({ msgId, timestamp, body, secrets }),
  };
}
