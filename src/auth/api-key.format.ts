import { createHash, hash, randomInt } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_PREFIX = 'th_live_';
const BODY_LEN = 32;
const CHECK_LEN = 6;
/** How much of a key operators see (and type to revoke it): the type prefix + 8 characters. */
export const DISPLAY_PREFIX_LEN = KEY_PREFIX.length + 8;
const KEY_RE = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${BODY_LEN + CHECK_LEN}}$`);

function base62(n: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

function checksum(body: string): string {
  return base62(createHash('sha256').update(body).digest().readUInt32BE(0), CHECK_LEN);
}

/** `th_live_` + 32 random base62 characters (≈190 bits) + a 6-character checksum that catches typos offline. */
export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < BODY_LEN; i++) body += ALPHABET[randomInt(62)];
  return KEY_PREFIX + body + checksum(body);
}

/** Shape and checksum only; says nothing about whether the key exists. */
export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_RE.test(key)) return false;
  const rest = key.slice(KEY_PREFIX.length);
  return checksum(rest.slice(0, BODY_LEN)) === rest.slice(BODY_LEN);
}

/** SHA-256 hex of the key: taken on every authenticated request (the cache's key), so one-shot, without a Hash object. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LEN);
}
