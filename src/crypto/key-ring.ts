import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Encryption at rest of the secrets trendhooks must keep in clear form to use (webhook signing
 * secrets, the generated cursor secret): AES-256-GCM under a key ring whose first key encrypts
 * and whose every key decrypts.
 *
 * Stored form: `enc:v2:<key id>:<base64url(iv ‖ ciphertext ‖ tag)>`. The prefix tells an
 * encrypted value from a plaintext one written before encryption existed (`whsec_…`, base64url
 * cursor secrets never start with `enc:`), and the key id tells the re-encrypt command which rows
 * are not under the newest key yet. The additional data binds a value to its key id, its row
 * (e.g. `webhook:<id>`) and its column, so a ciphertext copied onto another row, or moved from
 * `secret` to `previous_secret` in the same row, does not decrypt.
 *
 * `enc:v1:` values (written before the column was bound) still decrypt, bound to their row
 * alone; they are not current, so `trendhooks encryption reencrypt` rewrites them as v2. A v2
 * value relabelled v1 does not decrypt (the version is part of the additional data).
 */
/** What every encrypted value starts with, whatever its version. */
export const ENCRYPTED_PREFIX = 'enc:';
/** The version written now: bound to row and column. */
export const CURRENT_PREFIX = 'enc:v2:';
/** The first version: bound to the row only, still read. */
export const V1_PREFIX = 'enc:v1:';
export const ENCRYPTION_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID_RE = /^[A-Za-z0-9_-]{1,32}$/;

export interface EncryptionKey {
  id: string;
  key: Buffer;
}

/**
 * Where a value is stored: its row (`webhook:<id>`, `setting:<key>`) and its column
 * (`secret`, `previous_secret`, `value`). Both are bound into the ciphertext.
 */
export interface SecretPlace {
  row: string;
  column: string;
}

/** A stored value that no key of the ring decrypts (wrong key, unknown key id, tampered or cut). Never carries the value. */
export class SecretDecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretDecryptionError';
  }
}

/**
 * Parses `ENCRYPTION_KEYS`: `id:base64key` entries separated by commas or whitespace, newest
 * (encrypting) first; each key is 32 bytes in standard or URL-safe base64. Errors name the entry
 * by its position and id, never by its key.
 */
export function parseEncryptionKeys(raw: string): EncryptionKey[] {
  try {
    return parseKeyEntries(raw);
  } catch (err) {
    // A host calls this on its own setting: the message says which one.
    throw new Error(`ENCRYPTION_KEYS: ${(err as Error).message}`, { cause: err });
  }
}

/** parseEncryptionKeys without the setting's name: the key file's errors name the file instead. */
export function parseKeyEntries(raw: string): EncryptionKey[] {
  const entries = raw.split(/[\s,]+/).filter((e) => e.length > 0);
  if (entries.length === 0) throw new Error('no key given (expected id:base64key[,id:base64key…])');
  const seen = new Set<string>();
  return entries.map((entry, i) => {
    const colon = entry.indexOf(':');
    if (colon < 0) throw new Error(`entry ${i + 1} must be id:base64key`);
    const id = entry.slice(0, colon);
    const encoded = entry.slice(colon + 1);
    if (!KEY_ID_RE.test(id)) throw new Error(`entry ${i + 1}: key id must be 1 to 32 of A-Z a-z 0-9 _ -`);
    if (seen.has(id)) throw new Error(`key id "${id}" appears twice`);
    seen.add(id);
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)) throw new Error(`key "${id}" is not base64`);
    const key = Buffer.from(encoded.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (key.length !== ENCRYPTION_KEY_BYTES) throw new Error(`key "${id}" must be ${ENCRYPTION_KEY_BYTES} bytes (44 base64 characters), got ${key.length} bytes`);
    return { id, key };
  });
}

/** A fresh key in the ENCRYPTION_KEYS spelling; its id is derived from the key, so two generated keys never share one. */
export function generateEncryptionKey(): { id: string; key: Buffer; entry: string } {
  const key = randomBytes(ENCRYPTION_KEY_BYTES);
  const id = `k${createHash('sha256').update('trendhooks:encryption-key-id:').update(key).digest('hex').slice(0, 8)}`;
  return { id, key, entry: `${id}:${key.toString('base64')}` };
}

export class EncryptionKeyRing {
  private readonly byId: ReadonlyMap<string, Buffer>;
  readonly primaryId: string;

  constructor(keys: readonly EncryptionKey[]) {
    if (keys.length === 0) throw new Error('an encryption key ring needs at least one key');
    const byId = new Map<string, Buffer>();
    for (const k of keys) {
      if (!KEY_ID_RE.test(k.id)) throw new Error(`bad key id "${k.id}"`);
      if (k.key.length !== ENCRYPTION_KEY_BYTES) throw new Error(`key "${k.id}" must be ${ENCRYPTION_KEY_BYTES} bytes`);
      if (byId.has(k.id)) throw new Error(`key id "${k.id}" appears twice`);
      byId.set(k.id, Buffer.from(k.key));
    }
    this.byId = byId;
    this.primaryId = keys[0].id;
  }

  get keyIds(): string[] {
    return [...this.byId.keys()];
  }

  /**
   * Encrypts under the first key (or the ring's key `keyId`), bound to `place` (row and column);
   * decrypt needs the same place.
   */
  encrypt(plain: string, place: SecretPlace, keyId = this.primaryId): string {
    const key = this.byId.get(keyId);
    if (!key) throw new Error(`key id "${keyId}" is not in the key ring`);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(aadV2(keyId, place));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${CURRENT_PREFIX}${keyId}:${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
  }

  /**
   * The clear value. A value without the `enc:` prefix is plaintext from before encryption and is
   * returned as it is; `enc:v1:` values are read with their row-only binding.
   */
  decrypt(stored: string, place: SecretPlace): string {
    if (!isEncrypted(stored)) return stored;
    const v1 = stored.startsWith(V1_PREFIX);
    if (!v1 && !stored.startsWith(CURRENT_PREFIX)) throw new SecretDecryptionError('stored secret has an unknown encryption version');
    const rest = stored.slice(CURRENT_PREFIX.length);
    const colon = rest.indexOf(':');
    const id = colon < 0 ? '' : rest.slice(0, colon);
    const key = this.byId.get(id);
    if (!key) throw new SecretDecryptionError(`stored secret is encrypted under key id "${id}", which is not in the key ring (ENCRYPTION_KEYS / key file)`);
    const raw = Buffer.from(rest.slice(colon + 1), 'base64url');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretDecryptionError(`stored secret under key id "${id}" is cut short`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(v1 ? aadV1(id, place) : aadV2(id, place));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretDecryptionError(`stored secret does not decrypt under key id "${id}": wrong key, or the value was altered`);
    }
  }

  /** True when `stored` is encrypted under the first key in the current version (nothing for the re-encrypt command to do). */
  isCurrent(stored: string): boolean {
    return stored.startsWith(CURRENT_PREFIX) && keyIdOf(stored) === this.primaryId;
  }
}

/** Whether `id` could be a key id of a ring (what ENCRYPTION_KEYS accepts). */
export function isKeyId(id: string): boolean {
  return KEY_ID_RE.test(id);
}

export function isEncrypted(stored: string): boolean {
  return stored.startsWith(ENCRYPTED_PREFIX);
}

/** The key id of an encrypted value (any version); null for plaintext. */
export function keyIdOf(stored: string): string | null {
  if (!stored.startsWith(CURRENT_PREFIX) && !stored.startsWith(V1_PREFIX)) return null;
  const rest = stored.slice(CURRENT_PREFIX.length);
  const colon = rest.indexOf(':');
  return colon < 0 ? null : rest.slice(0, colon);
}

function aadV1(keyId: string, place: SecretPlace): Buffer {
  return Buffer.from(`trendhooks:v1:${keyId}:${place.row}`, 'utf8');
}

// The column comes before the row: a column name holds no ':', so no two places give the same text.
function aadV2(keyId: string, place: SecretPlace): Buffer {
  return Buffer.from(`trendhooks:v2:${keyId}:${place.column}:${place.row}`, 'utf8');
}
