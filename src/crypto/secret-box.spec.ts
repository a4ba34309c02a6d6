import type { DataSource } from 'typeorm';
import { UnsupportedDatabaseError } from '../database/dialect';
import { Logger } from '@nestjs/common';
import type { SettingsStore } from '../settings/settings.store';
import { generateEncryptionKey } from './key-ring';
import { SecretBox } from './secret-box';
import { StoredSecrets, StoredSecretValue } from './stored-secrets';

const at = (id: string) => ({ row: `webhook:${id}`, column: 'secret' });

function box(): SecretBox {
  return new SecretBox({ keys: [generateEncryptionKey()] }, {} as DataSource);
}

describe('SecretBox.decrypt cache', () => {
  it('decrypts a stored value once, then answers from the cache', () => {
    const b = box();
    const stored = b.encrypt('whsec_one', at('w1'));
    const spy = jest.spyOn(b.ring, 'decrypt');
    expect(b.decrypt(stored, at('w1'))).toBe('whsec_one');
    expect(b.decrypt(stored, at('w1'))).toBe('whsec_one');
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('keys the cache on the context too: a value copied to another row still fails', () => {
    const b = box();
    const stored = b.encrypt('whsec_one', at('w1'));
    expect(b.decrypt(stored, at('w1'))).toBe('whsec_one');
    expect(() => b.decrypt(stored, at('w2'))).toThrow(/does not decrypt/);
  });

  it('keeps no slot for a value stored in clear', () => {
    const b = box();
    const spy = jest.spyOn(b.ring, 'decrypt');
    expect(b.decrypt('whsec_plain', at('w1'))).toBe('whsec_plain');
    expect(b.decrypt('whsec_plain', at('w1'))).toBe('whsec_plain');
    expect(spy).toHaveBeenCalledTimes(2);
  });

  it('drops the least recently used value when full, not the oldest one still in use', () => {
    const b = box();
    const hot = b.encrypt('whsec_hot', at('hot'));
    b.decrypt(hot, at('hot'));
    const stored = Array.from({ length: 10_000 }, (_, i) => b.encrypt(`whsec_${i}`, at(String(i))));
    // Full (10,000 entries) with the hot webhook the oldest, then signed again, then one more.
    for (let i = 0; i < 9_999; i++) b.decrypt(stored[i], at(String(i)));
    b.decrypt(hot, at('hot'));
    b.decrypt(stored[9_999], at('9999'));
    const spy = jest.spyOn(b.ring, 'decrypt');
    expect(b.decrypt(hot, at('hot'))).toBe('whsec_hot');
    expect(spy).not.toHaveBeenCalled();
    // The least recently used one went instead.
    expect(b.decrypt(stored[0], at('0'))).toBe('whsec_0');
    expect(spy).toHaveBeenCalledTimes(1);
  });
});

describe('SecretBox on a database trendhooks does not run on', () => {
  it('refuses to start, before any query is written for it as SQLite', async () => {
    const query = jest.fn(async () => []);
    const ds = { options: { type: 'mysql' }, isInitialized: true, query } as unknown as DataSource;
    const b = new SecretBox({ keys: [generateEncryptionKey()] }, ds);
    await expect(b.onModuleInit()).rejects.toThrow(UnsupportedDatabaseError);
    await expect(b.onModuleInit()).rejects.toThrow('this data source uses the "mysql" driver');
    expect(query).not.toHaveBeenCalled();
  });
});

/** A LIKE pattern (backslash escapes) as a regular expression. */
function like(pattern: string): RegExp {
  const body = pattern.replace(/\\(.)|([%_])|([^\\%_])/g, (_m, esc: string, wild: string, ch: string) =>
    wild === '%' ? '.*' : wild === '_' ? '.' : (esc ?? ch).replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
  );
  return new RegExp(`^${body}$`, 's');
}

/** An owner's table of secrets, in memory: what the startup check may ask of it. */
class FakeSecrets extends StoredSecrets {
  readonly kind = 'thing';
  readonly columns = ['secret'];
  asked: string[] = [];

  constructor(private readonly rows: StoredSecretValue[]) {
    super();
  }

  async present(): Promise<boolean> {
    return true;
  }

  async sample(column: string, pattern: string, notLike: readonly string[], limit: number): Promise<StoredSecretValue[]> {
    this.asked.push(column);
    return this.rows.filter((r) => like(pattern).test(r.stored) && !notLike.some((n) => like(n).test(r.stored))).slice(0, limit);
  }

  async countCurrentNotLike(pattern: string): Promise<number> {
    return this.rows.filter((r) => !like(pattern).test(r.stored)).length;
  }
}

describe("SecretBox's startup check on the tables their owners register", () => {
  const ds = { options: { type: 'better-sqlite3' }, isInitialized: true } as unknown as DataSource;
  // A host database without the optional settings feature: only the registered table is checked.
  const noSettings = { exists: async () => false } as unknown as SettingsStore;
  const k1 = generateEncryptionKey();
  const writer = new SecretBox({ keys: [k1] }, {} as DataSource);
  const sealed = (id: string) => ({ id, stored: writer.encrypt(`whsec_${id}`, { row: `thing:${id}`, column: 'secret' }) });

  it('matches the LIKE patterns the way the databases do (the fake itself works)', () => {
    expect(like('enc:v_\\:k1\\:%').test('enc:v2:k1:abc')).toBe(true);
    expect(like('a\\_b%').test('axb')).toBe(false);
    expect(like('a\\_b%').test('a_bc')).toBe(true);
  });

  it('samples a registered table under each key id and starts when its values decrypt, warning of values in clear', async () => {
    const table = new FakeSecrets([sealed('a'), sealed('b'), { id: 'c', stored: 'whsec_plain' }]);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const b = new SecretBox({ keys: [k1] }, ds, noSettings);
    b.holdSecretsIn(table);
    b.holdSecretsIn(table); // registered once
    await expect(b.verifyDatabase()).resolves.toBeUndefined();
    // Per key id, then once for key ids the ring lacks.
    expect(table.asked).toEqual(['secret', 'secret']);
    expect(warn).toHaveBeenCalledWith('1 thing secret(s) are still stored in clear; run "trendhooks encryption reencrypt" to encrypt them');
    warn.mockRestore();
  });

  it("refuses to start when a registered table's values are under a key id the ring lacks, naming the rows", async () => {
    const b = new SecretBox({ keys: [generateEncryptionKey()] }, ds, noSettings);
    b.holdSecretsIn(new FakeSecrets([sealed('a')]));
    await expect(b.verifyDatabase()).rejects.toThrow(`stored secrets are encrypted under key id "${k1.id}", which is not in the key ring (thing:a secret)`);
  });

  it('runs no SQL of its own: with no table registered and no settings table, the data source is never asked', async () => {
    const b = new SecretBox({ keys: [generateEncryptionKey()] }, ds, noSettings);
    await expect(b.verifyDatabase()).resolves.toBeUndefined();
  });
});
