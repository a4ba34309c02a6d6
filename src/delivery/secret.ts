import { randomBytes } from 'node:crypto';

/** Standard Webhooks secrets are this prefix + base64 of the raw HMAC key. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** 32 bytes = the SHA-256 block-size-safe key length the spec recommends (24..64). */
const SECRET_BYTES = 32;

// Standard (not URL-safe) base64 with padding: what the receiver libraries decode.
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A fresh signing secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/**
 * The raw HMAC key of a `whsec_` secret. Throws on a missing prefix, non-base64 text or an
 * empty key, so a corrupt secret fails loudly instead of signing with garbage that no
 * receiver could verify.
 */
export function decodeWebhookSecret(secret: string): Buffer {
  if (typeof secret !== 'string' || !secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    throw new Error(`Webhook secret must start with "${WEBHOOK_SECRET_PREFIX}"`);
  }
  const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  // Buffer.from(_, 'base64') silently skips bad characters, hence the explicit check.
  if (encoded.length === 0 || !BASE64_RE.test(encoded)) {
    throw new Error('Webhook secret must be "whsec_" followed by standard base64');
  }
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) {
    throw new Error('Webhook secret key is empty');
  }
  return key;
}
