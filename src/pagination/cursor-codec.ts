import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../common/errors';

/** One keyset value: e.g. a created_at in epoch milliseconds or a row id. */
export type KeysetValue = string | number;
/** The keyset tuple of a row, in the order of the ORDER BY (see README "Keyset contract"). */
export type CursorPosition = KeysetValue[];
export type CursorDirection = 'next' | 'prev';

export interface CursorKey {
  id: string;
  secret: Buffer;
}

export interface CursorEncodeInput {
  route: string;
  customerId: string;
  params: Record<string, string>;
  position: CursorPosition;
  direction: CursorDirection;
}

export interface CursorExpectation {
  route: string;
  customerId: string;
  params: Record<string, string>;
}

export interface DecodedCursor {
  position: CursorPosition;
  direction: CursorDirection;
}

export interface CursorCodecOptions {
  ttlSeconds: number;
}

export const DEFAULT_CURSOR_TTL_SECONDS = 24 * 60 * 60;
/** HMAC-SHA256 keys shorter than this are guessable offline from any issued cursor. */
export const MIN_CURSOR_SECRET_LENGTH = 32;
/** Refuse bigger inputs before hashing, so a client cannot make us HMAC megabytes per request. */
export const MAX_CURSOR_TOKEN_LENGTH = 1024;
/** Keyset tuples are short (e.g. [createdAtMs, id]); a bound keeps the payload check cheap. */
export const MAX_CURSOR_POSITION_LENGTH = 8;

/** The client-visible reasons (AppError messages) for a rejected cursor. */
export const CURSOR_ERROR_MESSAGES = {
  empty: 'cursor is empty',
  tooLong: 'cursor is too long',
  malformed: 'cursor is malformed',
  unknownKey: 'cursor was signed with an unknown or retired key',
  badSignature: 'cursor signature is invalid',
  badPayload: 'cursor payload is malformed',
  badVersion: 'cursor version is not supported',
  otherRoute: 'cursor was issued for another route',
  otherCustomer: 'cursor was issued for another customer',
  otherParams: 'cursor was issued for other route parameters',
  expired: 'cursor has expired',
} as const;

const PAYLOAD_VERSION = 1;
// Key ids travel inside the token between '.' separators, so they must not contain one.
const KEY_ID_RE = /^[A-Za-z0-9_-]{1,64}$/;
const B64URL_RE = /^[A-Za-z0-9_-]+$/;
// 16 bytes of SHA-256 in unpadded base64url.
const PARAMS_HASH_RE = /^[A-Za-z0-9_-]{22}$/;
const PAYLOAD_KEYS = ['c', 'd', 'e', 'k', 'p', 'r', 'v'];

interface CursorPayloadV1 {
  v: 1;
  r: string;
  c: string;
  p: string;
  k: CursorPosition;
  d: CursorDirection;
  e: number;
}

/** Signing keys for cursors: the first key signs, every key verifies (rotation: prepend the new one). */
export class CursorKeyRing {
  private readonly byId: ReadonlyMap<string, CursorKey>;
  private readonly signer: CursorKey;

  constructor(keys: readonly CursorKey[]) {
    if (keys.length === 0) throw new Error('CursorKeyRing needs at least one key');
    const byId = new Map<string, CursorKey>();
    for (const key of keys) {
      if (!KEY_ID_RE.test(key.id)) {
        throw new Error(`cursor key id "${key.id}" must be 1-64 characters of [A-Za-z0-9_-]`);
      }
      if (key.secret.length < MIN_CURSOR_SECRET_LENGTH) {
        throw new Error(`cursor key "${key.id}" is shorter than ${MIN_CURSOR_SECRET_LENGTH} bytes`);
      }
      if (byId.has(key.id)) throw new Error(`cursor key id "${key.id}" is used twice`);
      // Copy so later mutation of the caller's buffer cannot change our keys.
      byId.set(key.id, { id: key.id, secret: Buffer.from(key.secret) });
    }
    this.byId = byId;
    this.signer = byId.get(keys[0].id)!;
  }

  /**
   * Builds a ring from raw secrets (e.g. `parseCursorSecrets(CURSOR_SECRET)`), the first one signing.
   * Key ids are derived from the secrets so tokens stay verifiable across restarts and instances.
   */
  static fromSecrets(secrets: readonly string[]): CursorKeyRing {
    return new CursorKeyRing(
      secrets.map((secret, i) => {
        assertSecretLength(secret, i);
        return { id: deriveCursorKeyId(secret), secret: Buffer.from(secret, 'utf8') };
      }),
    );
  }

  get signingKey(): CursorKey {
    return this.signer;
  }

  get keyIds(): string[] {
    return [...this.byId.keys()];
  }

  find(id: string): CursorKey | undefined {
    return this.byId.get(id);
  }
}

/** Key id = first 8 hex chars of a domain-separated SHA-256 of the secret: stable, and reveals nothing useful. */
export function deriveCursorKeyId(secret: string): string {
  return createHash('sha256').update('trendhooks:cursor-key-id:').update(secret, 'utf8').digest('hex').slice(0, 8);
}

/**
 * Parses the comma-separated `CURSOR_SECRET` value (newest first). Entries are trimmed; empty entries
 * (e.g. a trailing comma) are ignored. Throws an Error naming the problem, never echoing a secret.
 */
const PLACEHOLDER_SECRET = /change[-_ ]?me|placeholder|replace[-_ ]?me|your[-_ ]?secret|^(.)\1+$/i;

export function parseCursorSecrets(text: string): string[] {
  const secrets = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (secrets.length === 0) throw new Error('CURSOR_SECRET must contain at least one secret');
  return checkCursorSecrets(secrets);
}

/** The secrets as given (CURSOR_SECRET's entries, or PaginationModule's `secrets`), refused when short, a placeholder or twice. */
export function checkCursorSecrets(secrets: string[]): string[] {
  secrets.forEach(assertSecretLength);
  // A value copied from an example is public: cursors signed with it could be forged by anyone.
  const placeholder = secrets.findIndex((s) => PLACEHOLDER_SECRET.test(s));
  if (placeholder >= 0) throw new Error(`CURSOR_SECRET entry #${placeholder + 1} is a placeholder; set a random one, e.g. openssl rand -base64 48`);
  if (new Set(secrets).size !== secrets.length) throw new Error('CURSOR_SECRET lists the same secret twice');
  return secrets;
}

function assertSecretLength(secret: string, index: number): void {
  if (secret.length < MIN_CURSOR_SECRET_LENGTH) {
    throw new Error(
      `CURSOR_SECRET entry #${index + 1} has ${secret.length} characters; at least ${MIN_CURSOR_SECRET_LENGTH} are required`,
    );
  }
}

/**
 * Hash of the route parameters bound into a cursor: SHA-256 over canonical JSON (keys sorted,
 * as [key, value] pairs so it is unambiguous), truncated to 16 bytes. Raw params never enter the token.
 */
export function hashCursorParams(params: Record<string, string>): string {
  // Most list routes bind no parameters: that hash is a constant.
  if (isEmpty(params)) return EMPTY_PARAMS_HASH ?? (EMPTY_PARAMS_HASH = computeParamsHash({}));
  return computeParamsHash(params);
}

let EMPTY_PARAMS_HASH: string | undefined;

function isEmpty(params: Record<string, string>): boolean {
  for (const _ in params) return false;
  return true;
}

function computeParamsHash(params: Record<string, string>): string {
  const pairs = Object.keys(params)
    .sort()
    .map((key) => {
      const value = params[key];
      if (typeof value !== 'string') throw new Error(`cursor param "${key}" must be a string`);
      return [key, value];
    });
  const canonical = JSON.stringify(pairs);
  let hash = PARAMS_HASHES.get(canonical);
  if (hash === undefined) {
    hash = createHash('sha256').update(canonical, 'utf8').digest().subarray(0, 16).toString('base64url');
    // A list route's parameters take few values at a time (a subreddit, a user, a webhook id): their
    // hashes are kept, not taken again per page. The bound keeps memory flat whatever callers send.
    if (PARAMS_HASHES.size >= MAX_PARAMS_HASHES) PARAMS_HASHES.clear();
    PARAMS_HASHES.set(canonical, hash);
  }
  return hash;
}

const PARAMS_HASHES = new Map<string, string>();
const MAX_PARAMS_HASHES = 4096;

/** Encodes and verifies signed, route-bound, expiring keyset cursors (format in README.md). */
export class CursorCodec {
  private readonly ttlSeconds: number;

  constructor(
    private readonly keys: CursorKeyRing,
    opts: CursorCodecOptions,
  ) {
    if (!Number.isSafeInteger(opts.ttlSeconds) || opts.ttlSeconds < 1) {
      throw new Error('cursor ttlSeconds must be a positive integer');
    }
    this.ttlSeconds = opts.ttlSeconds;
  }

  encode(input: CursorEncodeInput, now: Date): string {
    // Bad input here is a programming error (500), not a client error.
    if (!isNonEmptyString(input.route)) throw new Error('cursor route must be a non-empty string');
    if (!isNonEmptyString(input.customerId)) throw new Error('cursor customerId must be a non-empty string');
    if (!isPosition(input.position)) {
      throw new Error(`cursor position must be 1-${MAX_CURSOR_POSITION_LENGTH} strings or finite numbers`);
    }
    if (input.direction !== 'next' && input.direction !== 'prev') throw new Error('cursor direction must be next or prev');

    const payload: CursorPayloadV1 = {
      v: PAYLOAD_VERSION,
      r: input.route,
      c: input.customerId,
      p: hashCursorParams(input.params),
      k: [...input.position],
      d: input.direction,
      e: epochSeconds(now) + this.ttlSeconds,
    };
    const payloadB64 = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
    const key = this.keys.signingKey;
    const token = `${payloadB64}.${key.id}.${sign(key, payloadB64)}`;
    // Never hand out a token that decode would refuse as too long.
    if (token.length > MAX_CURSOR_TOKEN_LENGTH) throw new Error('cursor position is too large to encode');
    return token;
  }

  /** Throws AppError('INVALID_CURSOR', reason) for anything but a valid cursor for `expected`. */
  decode(token: string, expected: CursorExpectation, now: Date): DecodedCursor {
    if (typeof token !== 'string' || token.length === 0) throw invalid('empty');
    if (token.length > MAX_CURSOR_TOKEN_LENGTH) throw invalid('tooLong');

    const parts = token.split('.');
    if (parts.length !== 3) throw invalid('malformed');
    const [payloadB64, keyId, signature] = parts;
    if (!B64URL_RE.test(payloadB64) || !KEY_ID_RE.test(keyId) || !B64URL_RE.test(signature)) {
      throw invalid('malformed');
    }

    const key = this.keys.find(keyId);
    if (!key) throw invalid('unknownKey');
    // Compare the canonical base64url text, so non-canonical encodings of the same bytes
    // (e.g. a changed padding bit in the last character) are refused too.
    const expectedSig = Buffer.from(sign(key, payloadB64), 'utf8');
    const givenSig = Buffer.from(signature, 'utf8');
    if (givenSig.length !== expectedSig.length || !timingSafeEqual(givenSig, expectedSig)) {
      throw invalid('badSignature');
    }

    // Only now, with the bytes known to be ours, parse; still validate strictly (old or buggy issuers).
    const payload = parsePayload(payloadB64);
    if (payload.r !== expected.route) throw invalid('otherRoute');
    if (payload.c !== expected.customerId) throw invalid('otherCustomer');
    if (payload.p !== hashCursorParams(expected.params)) throw invalid('otherParams');
    if (epochSeconds(now) >= payload.e) throw invalid('expired');
    return { position: payload.k, direction: payload.d };
  }
}

function sign(key: CursorKey, payloadB64: string): string {
  return createHmac('sha256', key.secret).update(`v1.${key.id}.${payloadB64}`, 'utf8').digest('base64url');
}

function parsePayload(payloadB64: string): CursorPayloadV1 {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(payloadB64, 'base64url').toString('utf8'));
  } catch {
    throw invalid('badPayload');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('badPayload');
  const obj = value as Record<string, unknown>;
  if (obj.v !== PAYLOAD_VERSION) throw invalid('badVersion');
  const keys = Object.keys(obj).sort();
  if (keys.length !== PAYLOAD_KEYS.length || keys.some((k, i) => k !== PAYLOAD_KEYS[i])) throw invalid('badPayload');
  if (
    !isNonEmptyString(obj.r) ||
    !isNonEmptyString(obj.c) ||
    typeof obj.p !== 'string' ||
    !PARAMS_HASH_RE.test(obj.p) ||
    !isPosition(obj.k) ||
    (obj.d !== 'next' && obj.d !== 'prev') ||
    !Number.isSafeInteger(obj.e) ||
    (obj.e as number) < 1
  ) {
    throw invalid('badPayload');
  }
  return obj as unknown as CursorPayloadV1;
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function isPosition(value: unknown): value is CursorPosition {
  return (
    Array.isArray(value) &&
    value.length >= 1 &&
    value.length <= MAX_CURSOR_POSITION_LENGTH &&
    value.every((v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)))
  );
}

function epochSeconds(now: Date): number {
  const ms = now.getTime();
  if (!Number.isFinite(ms)) throw new Error('cursor clock returned an invalid Date');
  return Math.floor(ms / 1000);
}

function invalid(reason: keyof typeof CURSOR_ERROR_MESSAGES): AppError {
  return new AppError('INVALID_CURSOR', CURSOR_ERROR_MESSAGES[reason]);
}
