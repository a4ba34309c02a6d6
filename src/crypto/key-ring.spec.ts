import { createCipheriv, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadOrCreateKeyFile } from './key-file';
import { EncryptionKeyRing, generateEncryptionKey, isEncrypted, keyIdOf, parseEncryptionKeys, SecretDecryptionError } from './key-ring';

const key = (id: string, byte: number) => ({ id, key: Buffer.alloc(32, byte) });
const SECRET = 'whsec_' + Buffer.alloc(32, 9).toString('base64');
const A = { row: 'webhook:A', column: 'secret' };
const B = { row: 'webhook:B', column: 'secret' };

describe('EncryptionKeyRing', () => {
  const k1 = new EncryptionKeyRing([key('k1', 1)]);
  const k2k1 = new EncryptionKeyRing([key('k2', 2), key('k1', 1)]);

  it('round-trips under the first key, with its key id and version prefix, and a fresh IV each time', () => {
    const a = k1.encrypt(SECRET, A);
    const b = k1.encrypt(SECRET, A);
    expect(a).toMatch(/^enc:v2:k1:[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain(SECRET.slice(6, 20));
    expect(k1.decrypt(a, A)).toBe(SECRET);
    expect(keyIdOf(a)).toBe('k1');
    expect(isEncrypted(a)).toBe(true);
  });

  it('decrypts with any key of the ring and encrypts with the first (rotation)', () => {
    const old = k1.encrypt(SECRET, A);
    expect(k2k1.decrypt(old, A)).toBe(SECRET);
    expect(k2k1.isCurrent(old)).toBe(false);
    const now = k2k1.encrypt(SECRET, A);
    expect(keyIdOf(now)).toBe('k2');
    expect(k2k1.isCurrent(now)).toBe(true);
    // The old ring cannot read what the new key wrote: the id is unknown to it.
    expect(() => k1.decrypt(now, A)).toThrow(/key id "k2", which is not in the key ring/);
  });

  it('refuses a wrong key under the right id, without echoing the value', () => {
    const stored = k1.encrypt(SECRET, A);
    const impostor = new EncryptionKeyRing([key('k1', 7)]);
    let err: unknown;
    try {
      impostor.decrypt(stored, A);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SecretDecryptionError);
    expect((err as Error).message).toMatch(/does not decrypt under key id "k1"/);
    expect((err as Error).message).not.toContain(stored.slice(10));
  });

  it('refuses tampered, truncated and moved ciphertext', () => {
    const stored = k1.encrypt(SECRET, A);
    const raw = Buffer.from(stored.slice('enc:v2:k1:'.length), 'base64url');
    for (const i of [0, 13, raw.length - 1]) {
      const t = Buffer.from(raw);
      t[i] ^= 1;
      expect(() => k1.decrypt(`enc:v2:k1:${t.toString('base64url')}`, A)).toThrow(SecretDecryptionError);
    }
    expect(() => k1.decrypt(`enc:v2:k1:${raw.subarray(0, 20).toString('base64url')}`, A)).toThrow(/cut short/);
    // Copied onto another row, or relabelled to another key id, it does not decrypt either.
    expect(() => k1.decrypt(stored, B)).toThrow(SecretDecryptionError);
    const relabelled = new EncryptionKeyRing([key('k9', 1)]);
    expect(() => relabelled.decrypt(stored.replace('enc:v2:k1:', 'enc:v2:k9:'), A)).toThrow(SecretDecryptionError);
  });

  it('binds a value to its column: secret and previous_secret of one row cannot be swapped', () => {
    const secret = k1.encrypt(SECRET, { row: 'webhook:A', column: 'secret' });
    const previous = k1.encrypt('whsec_old', { row: 'webhook:A', column: 'previous_secret' });
    expect(() => k1.decrypt(secret, { row: 'webhook:A', column: 'previous_secret' })).toThrow(SecretDecryptionError);
    expect(() => k1.decrypt(previous, { row: 'webhook:A', column: 'secret' })).toThrow(SecretDecryptionError);
    expect(k1.decrypt(previous, { row: 'webhook:A', column: 'previous_secret' })).toBe('whsec_old');
  });

  it('still reads v1 values (bound to the row only), calls them not current, and refuses a v2 value relabelled v1', () => {
    const v1 = legacyV1(key('k1', 1), SECRET, 'webhook:A');
    expect(k1.decrypt(v1, A)).toBe(SECRET);
    expect(k1.decrypt(v1, { row: 'webhook:A', column: 'previous_secret' })).toBe(SECRET);
    expect(() => k1.decrypt(v1, B)).toThrow(SecretDecryptionError);
    expect(k1.isCurrent(v1)).toBe(false);
    expect(keyIdOf(v1)).toBe('k1');
    const v2 = k1.encrypt(SECRET, A);
    expect(() => k1.decrypt(v2.replace('enc:v2:', 'enc:v1:'), A)).toThrow(SecretDecryptionError);
    expect(() => k1.decrypt(v2.replace('enc:v2:', 'enc:v3:'), A)).toThrow(/unknown encryption version/);
  });

  it('passes plaintext written before encryption through, and calls it not current', () => {
    expect(k1.decrypt(SECRET, A)).toBe(SECRET);
    expect(isEncrypted(SECRET)).toBe(false);
    expect(k1.isCurrent(SECRET)).toBe(false);
  });
});

/** A value as the first version wrote it: additional data `trendhooks:v1:<key id>:<row>`. */
function legacyV1(k: { id: string; key: Buffer }, plain: string, row: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', k.key, iv);
  cipher.setAAD(Buffer.from(`trendhooks:v1:${k.id}:${row}`));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `enc:v1:${k.id}:${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
}

describe('parseEncryptionKeys / generateEncryptionKey', () => {
  it('parses a generated entry back to the same key, ids derived from the key', () => {
    const g = generateEncryptionKey();
    expect(g.id).toMatch(/^k[0-9a-f]{8}$/);
    expect(parseEncryptionKeys(` ${g.entry} `)).toEqual([{ id: g.id, key: g.key }]);
    expect(generateEncryptionKey().id).not.toBe(g.id);
  });

  it('refuses an empty list', () => {
    expect(() => parseEncryptionKeys(' , ')).toThrow(/no key given/);
  });
});

describe('loadOrCreateKeyFile', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-keyfile-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('creates the file 0600 (folder 0700) on first use and reads the same key afterwards', () => {
    const file = path.join(dir, 'sub', 'trendhooks.key');
    const first = loadOrCreateKeyFile(file);
    expect(first.created).toBe(true);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    const again = loadOrCreateKeyFile(file);
    expect(again.created).toBe(false);
    expect(again.keys).toEqual(first.keys);
  });

  it('accepts comments and a new key on top', () => {
    const file = path.join(dir, 'trendhooks.key');
    const a = generateEncryptionKey();
    const b = generateEncryptionKey();
    fs.writeFileSync(file, `# rotated\n${b.entry}\n${a.entry}\n`, { mode: 0o600 });
    expect(loadOrCreateKeyFile(file).keys.map((k) => k.id)).toEqual([b.id, a.id]);
  });

  it('refuses a key file that group or others may read, and leaves its mode for the operator to see', () => {
    const file = path.join(dir, 'trendhooks.key');
    fs.writeFileSync(file, `${generateEncryptionKey().entry}\n`);
    fs.chmodSync(file, 0o644);
    expect(() => loadOrCreateKeyFile(file)).toThrow(`encryption key file ${file} has mode 0644: group or others may read it`);
    expect(fs.statSync(file).mode & 0o777).toBe(0o644);
  });

  it('neither reads nor writes through a symbolic link, dangling or not', () => {
    const target = path.join(dir, 'elsewhere.key');
    fs.writeFileSync(target, `${generateEncryptionKey().entry}\n`, { mode: 0o600 });
    const link = path.join(dir, 'trendhooks.key');
    fs.symlinkSync(target, link);
    expect(() => loadOrCreateKeyFile(link)).toThrow(`encryption key file ${link} is a symbolic link`);
    const dangling = path.join(dir, 'planted.key');
    const victim = path.join(dir, 'victim');
    fs.symlinkSync(victim, dangling);
    expect(() => loadOrCreateKeyFile(dangling)).toThrow('is a symbolic link');
    expect(fs.existsSync(victim)).toBe(false);
  });

  (process.getuid?.() === 0 ? it : it.skip)("refuses a key file owned by another user (one planted for this process to use)", () => {
    const file = path.join(dir, 'trendhooks.key');
    fs.writeFileSync(file, `${generateEncryptionKey().entry}\n`, { mode: 0o600 });
    fs.chownSync(file, 65534, 65534);
    expect(() => loadOrCreateKeyFile(file)).toThrow(`encryption key file ${file} belongs to uid 65534, not to this process's user (uid 0)`);
  });

  it('names the file and the problem of a corrupt key file', () => {
    const file = path.join(dir, 'trendhooks.key');
    fs.writeFileSync(file, 'k1:short\n', { mode: 0o600 });
    expect(() => loadOrCreateKeyFile(file)).toThrow(`encryption key file ${file}: key "k1" must be 32 bytes`);
  });
});

